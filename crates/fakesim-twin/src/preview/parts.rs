//! Which geoms belong to the arm, its base, the fixed world and the movable objects, and how low
//! an arm geom reaches.

use crate::error::TwinError;
use fakesim_arm::ArmSpec;
use fakesim_arm::Joint;
use mujoco_rs::prelude::*;
use std::sync::Arc;

/// Geom whose top surface is the table plane for clearances.
pub const TABLE_TOP_GEOM: &str = "table_top";

/// What a geom is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    /// A link of the arm; `jaw` for the gripper's two bodies, which may touch objects.
    Arm { jaw: bool },
    /// The arm's base (the parent of the first joint's body).
    Base,
    /// Fixed to the world: the table, the floor.
    Fixed,
    /// A movable object.
    Object,
    /// A link or the base of another arm of the scene (the other side of a pair).
    OtherArm,
}

/// The scene's geoms sorted into parts, with their names, read once per model.
pub(crate) struct PartMap {
    /// The arm whose view this is.
    pub arm: &'static ArmSpec,
    /// Part of every geom.
    pub part: Vec<Part>,
    /// Name of every geom.
    pub geom_name: Vec<String>,
    /// Name of every geom's body.
    pub body_name: Vec<String>,
    /// Arm geoms that collide: the ones whose clearance to the table counts.
    pub arm_colliders: Vec<usize>,
    /// The geom whose top is the table plane.
    pub table_top: Option<usize>,
}

impl PartMap {
    /// Sorts the geoms of a model of `arms` as arm `focus` sees them; an arm is everything
    /// below its first joint's body, the others' links and bases are [`Part::OtherArm`].
    pub fn new(model: &MjModel, arms: &[&'static ArmSpec], focus: usize) -> Result<Self, TwinError> {
        let joint_body = |arm: &ArmSpec, joint: Joint| -> Result<usize, TwinError> {
            let id = arm.model_name(joint);
            let found = model
                .name_to_id(MjtObjBase::mjOBJ_JOINT, &id)
                .ok_or_else(|| TwinError::Scene(format!("the scene has no joint {id:?}")))?;
            usize::try_from(model.jnt_bodyid()[found])
                .map_err(|_| TwinError::Scene(format!("joint {id:?} has no body")))
        };
        let arm: &'static ArmSpec = arms
            .get(focus)
            .copied()
            .ok_or_else(|| TwinError::Scene(format!("the scene has no arm {focus}")))?;
        let first = joint_body(arm, Joint::ShoulderPan)?;
        let jaws = [joint_body(arm, Joint::WristRoll)?, joint_body(arm, Joint::Gripper)?];
        let parents = model.body_parentid();
        let parent_of = |body: usize| usize::try_from(parents[body]).unwrap_or(0);
        let base = parent_of(first);
        let below = |mut body: usize, top: usize| loop {
            if body == top {
                return true;
            }
            match usize::try_from(parents[body]) {
                Ok(parent) if parent != body => body = parent,
                _ => return false,
            }
        };
        let on_arm = |body: usize| below(body, first);
        // The other arms from their bases down.
        let other_bases = arms
            .iter()
            .enumerate()
            .filter(|&(index, _)| index != focus)
            .map(|(_, other)| joint_body(other, Joint::ShoulderPan).map(parent_of))
            .collect::<Result<Vec<_>, _>>()?;
        let on_other_arm = |body: usize| other_bases.iter().any(|&top| top != 0 && below(body, top));
        let weld = model.body_weldid();
        let name = |kind, id: usize| match model.id_to_name(kind, id) {
            Some(n) if !n.is_empty() => n.to_owned(),
            _ => format!("#{id}"),
        };
        let ngeom = usize::try_from(model.ffi().ngeom).unwrap_or(0);
        let mut map = PartMap {
            arm,
            part: Vec::with_capacity(ngeom),
            geom_name: Vec::with_capacity(ngeom),
            body_name: Vec::with_capacity(ngeom),
            arm_colliders: Vec::new(),
            table_top: model.name_to_id(MjtObjBase::mjOBJ_GEOM, TABLE_TOP_GEOM),
        };
        for geom in 0..ngeom {
            let body = usize::try_from(model.geom_bodyid()[geom]).unwrap_or(0);
            let part = if on_arm(body) {
                Part::Arm {
                    jaw: jaws.contains(&body),
                }
            } else if body == base && base != 0 {
                Part::Base
            } else if on_other_arm(body) {
                Part::OtherArm
            } else if weld[body] == 0 {
                Part::Fixed
            } else {
                Part::Object
            };
            let collides = model.geom_contype()[geom] != 0 || model.geom_conaffinity()[geom] != 0;
            if collides && matches!(part, Part::Arm { .. }) {
                map.arm_colliders.push(geom);
            }
            map.part.push(part);
            map.geom_name.push(name(MjtObjBase::mjOBJ_GEOM, geom));
            map.body_name.push(name(MjtObjBase::mjOBJ_BODY, body));
        }
        Ok(map)
    }
}

impl PartMap {
    /// The parts as each of `arms` sees them, in their order.
    pub fn each_arm(model: &MjModel, arms: &[&'static ArmSpec]) -> Result<Vec<Self>, TwinError> {
        (0..arms.len()).map(|focus| PartMap::new(model, arms, focus)).collect()
    }
}

/// A geom's vertical extent in the world: the height of its centre and half its height (exact
/// for spheres, capsules, cylinders and boxes; the bounding box for other shapes).
fn vertical_extent(model: &MjModel, data: &MjData<Arc<MjModel>>, geom: usize) -> (f64, f64) {
    let z = data.geom_xpos()[geom][2];
    let m = data.geom_xmat()[geom];
    // Third row of the rotation: how much each local axis points up.
    let up = [m[6].abs(), m[7].abs(), m[8].abs()];
    let size = model.geom_size()[geom];
    match model.geom_type()[geom] {
        MjtGeomBase::mjGEOM_SPHERE => (z, size[0]),
        MjtGeomBase::mjGEOM_CAPSULE => (z, size[0] + size[1] * up[2]),
        MjtGeomBase::mjGEOM_CYLINDER => (z, size[1] * up[2] + size[0] * (1.0 - up[2] * up[2]).max(0.0).sqrt()),
        MjtGeomBase::mjGEOM_BOX => (z, size[0] * up[0] + size[1] * up[1] + size[2] * up[2]),
        _ => {
            let aabb = model.geom_aabb()[geom];
            let centre = z + m[6] * aabb[0] + m[7] * aabb[1] + m[8] * aabb[2];
            (centre, aabb[3] * up[0] + aabb[4] * up[1] + aabb[5] * up[2])
        }
    }
}

/// World height of a geom's lowest point.
pub(crate) fn lowest_z(model: &MjModel, data: &MjData<Arc<MjModel>>, geom: usize) -> f64 {
    let (centre, half) = vertical_extent(model, data, geom);
    centre - half
}

/// World height of a geom's highest point (the table top's surface).
pub(crate) fn highest_z(model: &MjModel, data: &MjData<Arc<MjModel>>, geom: usize) -> f64 {
    let (centre, half) = vertical_extent(model, data, geom);
    centre + half
}
