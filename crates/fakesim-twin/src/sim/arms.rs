//! Where each arm of the scene lives in the model: its joints, actuators and tool sites.

use super::{FIXED_JAW_SITE, JointInfo, MOVING_JAW_SITE, TCP_SITE};
use crate::error::TwinError;
use crate::values::Bounds;
use fakesim_arm::ArmSpec;
use fakesim_arm::joints::Joint;
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
        })
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
