//! Each joint's dynamics as the twin simulates them (servo stiffness, damping, rotor inertia,
//! friction, torque limit, transport delay), read from a compiled model or written into one,
//! and kept per arm in a profile file ([`profile`]).

mod arm_model;
pub mod profile;

pub use arm_model::ArmModel;

use crate::error::TwinError;
use fakesim_arm::ArmSpec;
use fakesim_arm::joints::Joint;
use mujoco_rs::prelude::*;
use serde::{Deserialize, Serialize};

/// One joint's dynamics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointDynamics {
    /// Position servo stiffness (N·m/rad): MuJoCo's `kp` of the position actuator.
    pub kp: f64,
    /// Viscous joint damping (N·m·s/rad).
    pub damping: f64,
    /// Reflected rotor inertia added to the joint (kg·m²).
    pub armature: f64,
    /// Dry (Coulomb) friction torque (N·m).
    pub frictionloss: f64,
    /// Largest torque the servo applies, either way (N·m).
    pub force_limit: f64,
    /// Time from a goal's bus write to the servo acting on it (s).
    pub delay_s: f64,
}

impl JointDynamics {
    /// The parameters in [`PARAMETERS`] order.
    pub fn values(&self) -> [f64; 6] {
        [
            self.kp,
            self.damping,
            self.armature,
            self.frictionloss,
            self.force_limit,
            self.delay_s,
        ]
    }

    /// Parameters from values in [`PARAMETERS`] order.
    pub fn from_values(v: [f64; 6]) -> Self {
        JointDynamics {
            kp: v[0],
            damping: v[1],
            armature: v[2],
            frictionloss: v[3],
            force_limit: v[4],
            delay_s: v[5],
        }
    }

    /// The first parameter that is not a finite number within its physical domain, by name.
    pub fn invalid(&self) -> Option<&'static str> {
        let v = self.values();
        PARAMETERS.iter().zip(v).find_map(|(p, x)| {
            let ok = x.is_finite() && x >= 0.0 && (x > 0.0 || !p.positive) && x <= p.ceiling;
            (!ok).then_some(p.name)
        })
    }
}

/// One parameter's name, unit and physical domain (a profile outside it is refused).
#[derive(Debug, Clone, Copy)]
pub struct Parameter {
    /// The profile's key.
    pub name: &'static str,
    /// Unit, as reports print it.
    pub unit: &'static str,
    /// Whether zero is outside the domain.
    pub positive: bool,
    /// Largest value a profile may hold.
    pub ceiling: f64,
}

/// The parameters of a joint, in the order [`JointDynamics::values`] gives them.
pub const PARAMETERS: [Parameter; 6] = [
    Parameter {
        name: "kp",
        unit: "N·m/rad",
        positive: true,
        ceiling: 1.0e5,
    },
    Parameter {
        name: "damping",
        unit: "N·m·s/rad",
        positive: false,
        ceiling: 1.0e3,
    },
    Parameter {
        name: "armature",
        unit: "kg·m²",
        positive: false,
        ceiling: 10.0,
    },
    Parameter {
        name: "frictionloss",
        unit: "N·m",
        positive: false,
        ceiling: 100.0,
    },
    Parameter {
        name: "force_limit",
        unit: "N·m",
        positive: true,
        ceiling: 100.0,
    },
    Parameter {
        name: "delay_s",
        unit: "s",
        positive: false,
        ceiling: 1.0,
    },
];

/// Where one arm joint lives in a compiled model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JointAddress {
    /// Index into `qpos`.
    pub qpos: usize,
    /// Index into `qvel` and the DOF arrays.
    pub dof: usize,
    /// The joint's position actuator.
    pub actuator: usize,
}

/// The addresses of `arm`'s six joints in `model`, action-key order; names the first missing.
pub fn joint_addresses(model: &MjModel, arm: &ArmSpec) -> Result<[JointAddress; 6], TwinError> {
    let mut out = [JointAddress {
        qpos: 0,
        dof: 0,
        actuator: 0,
    }; 6];
    for joint in Joint::ALL {
        let name = arm.model_name(joint);
        let missing = |kind: &str| TwinError::Scene(format!("the scene has no {kind} {name:?} ({})", arm.label(joint)));
        let id = model
            .name_to_id(MjtObjBase::mjOBJ_JOINT, &name)
            .ok_or_else(|| missing("joint"))?;
        let actuator = model
            .name_to_id(MjtObjBase::mjOBJ_ACTUATOR, &name)
            .ok_or_else(|| missing("actuator"))?;
        out[joint.index()] = JointAddress {
            qpos: model.jnt_qposadr()[id] as usize,
            dof: model.jnt_dofadr()[id] as usize,
            actuator,
        };
    }
    Ok(out)
}

/// An arm's six joints' dynamics, action-key order.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Dynamics {
    /// One entry per joint, indexed by [`Joint::index`].
    pub joints: [JointDynamics; 6],
}

impl Dynamics {
    /// The dynamics `model` was compiled with for `arm` (no delay: MJCF has none).
    pub fn read(model: &MjModel, arm: &ArmSpec) -> Result<Self, TwinError> {
        let at = joint_addresses(model, arm)?;
        Ok(Dynamics {
            joints: at.map(|a| JointDynamics {
                kp: model.actuator_gainprm()[a.actuator][0],
                damping: model.dof_damping()[a.dof],
                armature: model.dof_armature()[a.dof],
                frictionloss: model.dof_frictionloss()[a.dof],
                force_limit: model.actuator_forcerange()[a.actuator][1],
                delay_s: 0.0,
            }),
        })
    }

    /// Writes these dynamics into `model` at the joints `at` (the delay is the caller's: MuJoCo
    /// steps act on the setpoints as they are).
    pub fn apply(&self, model: &mut MjModel, at: &[JointAddress; 6]) {
        for (d, a) in self.joints.iter().zip(at) {
            model.dof_damping_mut()[a.dof] = d.damping;
            model.dof_armature_mut()[a.dof] = d.armature;
            model.dof_frictionloss_mut()[a.dof] = d.frictionloss;
            model.actuator_forcerange_mut()[a.actuator] = [-d.force_limit, d.force_limit];
            model.actuator_biasprm_mut()[a.actuator][1] = -d.kp;
            set_gain(model, a.actuator, d.kp);
        }
    }
}

/// Sets the fixed gain of position actuator `actuator` (its `kp`).
#[allow(unsafe_code)]
fn set_gain(model: &mut MjModel, actuator: usize, kp: f64) {
    // SAFETY: `gainprm` of a fixed-gain actuator is a plain coefficient that MuJoCo only reads
    // while computing actuator forces; no pipeline stage can run during this call because we
    // hold the model mutably, and no index or size is derived from the value written.
    unsafe {
        model.actuator_gainprm_mut()[actuator][0] = kp;
    }
}
