//! The arm alone: one arm of the built-in scene on its table, without the task objects, with its
//! joints' dynamics written in. It is the one model the fit replays recordings on, its
//! known-truth recordings are made on, and the shadow rolls out beside the readings, so the
//! shadow runs the model the fit scored.

use super::{Dynamics, JointAddress, joint_addresses};
use crate::error::TwinError;
use crate::sim::step_at;
use crate::values::Bounds;
use crate::{ArmType, Scene};
use mujoco_rs::prelude::*;

/// One arm alone on its table, and where its six joints are in the model.
#[derive(Debug)]
pub struct ArmModel {
    /// The compiled model.
    pub model: MjModel,
    /// The six joints' addresses, action-key order.
    pub at: [JointAddress; 6],
}

impl ArmModel {
    /// `arm` alone on its table with the model's own dynamics, stepping at `physics_step_s`
    /// (a profile's, which must divide the model's step, see [`step_at`]; `None`: the model's).
    /// A few tens of milliseconds.
    pub fn build(arm: ArmType, physics_step_s: Option<f64>) -> Result<Self, TwinError> {
        let mut model = Scene::builtin(arm, false).compile()?;
        if let Some(step) = physics_step_s {
            step_at(&mut model, step)?;
        }
        let at = joint_addresses(&model, arm.spec())?;
        Ok(ArmModel { model, at })
    }

    /// Writes `dynamics` into the joints (the delay stays the caller's, see [`Dynamics::apply`]).
    pub fn apply(&mut self, dynamics: &Dynamics) {
        dynamics.apply(&mut self.model, &self.at);
    }

    /// The physics step (s).
    pub fn timestep(&self) -> f64 {
        self.model.opt().timestep
    }

    /// Each joint's range, action-key order.
    pub fn ranges(&self) -> [Bounds; 6] {
        self.at.map(|a| {
            let [lo, hi] = self.model.jnt_range()[self.model.dof_jntid()[a.dof] as usize];
            Bounds { lo, hi }
        })
    }
}
