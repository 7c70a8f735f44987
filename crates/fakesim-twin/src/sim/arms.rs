//! The arms of the scene: where each lives in the model (its joints, actuators and tool
//! sites), and the focus that points the per-arm verbs at one of them.

use super::{FIXED_JAW_SITE, JointInfo, MOVING_JAW_SITE, Sim, TCP_SITE};
use crate::error::TwinError;
use crate::values::Bounds;
use fakesim_arm::ArmSpec;
use fakesim_arm::joints::Joint;
use feetech::delay::DelayLine;
use mujoco_rs::prelude::*;

/// One arm of the scene: its registry entry and its joints' and sites' places in the model.
pub(crate) struct ArmSlot {
    /// The registry's entry, with the side's prefix in a pair.
    pub spec: &'static ArmSpec,
    /// The six joints, action-key order.
    pub joints: Vec<JointInfo>,
    /// The tool centre point site.
    pub tcp_site: usize,
    /// The fixed and the moving jaw tip sites.
    pub jaw_sites: (usize, usize),
    /// The setpoints written lately, each joint's held back by its transport delay from a
    /// dynamics profile (zeros without one), for the physics steps and the preview to read.
    pub line: DelayLine<6>,
}

impl ArmSlot {
    /// Finds `spec`'s joints, actuators and sites in `model`, or names the first one missing.
    pub fn find(model: &MjModel, spec: &'static ArmSpec) -> Result<Self, TwinError> {
        let site = |name: &str| {
            let name = spec.part_name(name);
            model
                .name_to_id(MjtObjBase::mjOBJ_SITE, &name)
                .ok_or_else(|| TwinError::Scene(format!("the scene has no site {name:?}")))
        };
        Ok(ArmSlot {
            joints: Joint::ALL
                .into_iter()
                .map(|joint| joint_info(model, spec, joint))
                .collect::<Result<_, _>>()?,
            tcp_site: site(TCP_SITE)?,
            jaw_sites: (site(FIXED_JAW_SITE)?, site(MOVING_JAW_SITE)?),
            spec,
            line: DelayLine::new([0.0; 6], [0.0; 6]),
        })
    }
}

impl Sim {
    /// The arm the per-arm verbs act on: the scene's only arm, or the side of a pair in focus.
    pub fn arm(&self) -> &'static ArmSpec {
        self.slot().spec
    }

    /// Each joint's transport delay of the arm in focus, from its dynamics profile (s).
    pub fn arm_delay_s(&self) -> [f64; 6] {
        self.slot().line.delays()
    }

    /// Every arm in the scene, left first in a pair.
    pub fn arms(&self) -> Vec<&'static ArmSpec> {
        self.arms.iter().map(|slot| slot.spec).collect()
    }

    /// Points the per-arm verbs (joint reads and writes, the TCP, the preview) at arm `index`
    /// of [`Sim::arms`]; an index past the last arm is refused.
    pub fn focus(&mut self, index: usize) -> Result<(), TwinError> {
        if index >= self.arms.len() {
            return Err(TwinError::Scene(format!(
                "the scene holds {} arm(s); there is no arm {index}",
                self.arms.len()
            )));
        }
        self.focus = index;
        Ok(())
    }

    /// Runs `f` once with each arm in focus, in order, until it fails; then restores the focus.
    pub fn every_arm(&mut self, mut f: impl FnMut(&mut Sim) -> Result<(), TwinError>) -> Result<(), TwinError> {
        let focus = self.focus;
        let result = (0..self.arms.len()).try_for_each(|index| {
            self.focus = index;
            f(self)
        });
        self.focus = focus;
        result
    }

    /// The index in [`Sim::arms`] of the arm in focus.
    pub(crate) fn focus_index(&self) -> usize {
        self.focus
    }

    pub(super) fn slot(&self) -> &ArmSlot {
        &self.arms[self.focus]
    }
}

/// A joint of `spec` as the model holds it, with its actuator.
fn joint_info(model: &MjModel, spec: &ArmSpec, joint: Joint) -> Result<JointInfo, TwinError> {
    let name = spec.model_name(joint);
    let label = spec.label(joint);
    let joint_id = model
        .name_to_id(MjtObjBase::mjOBJ_JOINT, &name)
        .ok_or_else(|| TwinError::Scene(format!("the scene has no joint {name:?} ({label})")))?;
    let actuator = model
        .name_to_id(MjtObjBase::mjOBJ_ACTUATOR, &name)
        .ok_or_else(|| TwinError::Scene(format!("the scene has no actuator {name:?} ({label})")))?;
    let [lo, hi] = model.jnt_range()[joint_id];
    let [clo, chi] = model.actuator_ctrlrange()[actuator];
    Ok(JointInfo {
        id: name,
        label,
        range: Bounds { lo, hi },
        ctrl_range: Bounds { lo: clo, hi: chi },
        unit: "rad",
        qpos_adr: model.jnt_qposadr()[joint_id] as usize,
        dof_adr: model.jnt_dofadr()[joint_id] as usize,
        actuator,
    })
}
