//! Watches a preview step by step and turns what it saw into a report.

use super::PreviewLimits;
use super::parts::{Part, PartMap, highest_z, lowest_z};
use super::report::{
    Clearance, ContactClass, GripperStall, JointPreview, PreviewContact, PreviewReport, Violation, ViolationKind,
};
use crate::joints::{GRIPPER_INDEX, Joint};
use crate::values::Bounds;
use crate::watch::LIMIT_MARGIN_RAD;
use mujoco_rs::prelude::*;
use std::sync::Arc;

/// The gripper counts as stalled when it stays this far open of its target (rad, about 3°)...
pub const STALL_GAP_RAD: f64 = 0.05;
/// ...while moving slower than this (rad/s).
pub const STALL_SPEED_RAD_S: f64 = 0.05;
/// A contact already there at the start is a violation only once it is this much deeper (m):
/// an arm resting on the table may still be moved off it, and the soft contact settling under
/// the servos' hold (several millimetres when the measured arm sits where the model's table
/// is) is not a new collision. The table layer still guards the TCP.
pub const START_CONTACT_SLACK_M: f64 = 0.01;

/// The arm's joints at one instant, action-key order.
pub(crate) struct ArmSample {
    /// Positions (rad).
    pub qpos: [f64; 6],
    /// Velocities (rad/s).
    pub qvel: [f64; 6],
}

/// What a preview has seen so far.
pub(crate) struct Observer<'a> {
    parts: &'a PartMap,
    limits: PreviewLimits,
    ranges: [Bounds; 6],
    dt: f64,
    table_z: Option<f64>,
    contacts: Vec<PreviewContact>,
    pairs: Vec<(usize, usize)>,
    at_start: Vec<((usize, usize), f64)>,
    joints: [JointPreview; 6],
    speed_ticks: [u32; 6],
    past_ticks: [u32; 6],
    prev_qvel: [f64; 6],
    clearance: Option<Clearance>,
    stall: Option<GripperStall>,
}

impl<'a> Observer<'a> {
    /// Starts watching from the scratch data's current state.
    pub fn new(
        parts: &'a PartMap,
        limits: PreviewLimits,
        ranges: [Bounds; 6],
        data: &MjData<Arc<MjModel>>,
        start_qvel: [f64; 6],
    ) -> Self {
        let model = data.model();
        let mut observer = Observer {
            parts,
            limits,
            ranges,
            dt: model.opt().timestep,
            table_z: parts.table_top.map(|geom| highest_z(model, data, geom)),
            contacts: Vec::new(),
            pairs: Vec::new(),
            joints: [JointPreview::default(); 6],
            speed_ticks: [0; 6],
            past_ticks: [0; 6],
            prev_qvel: start_qvel,
            clearance: None,
            stall: None,
            at_start: Vec::new(),
        };
        observer.at_start = touching(data)
            .filter_map(|(g1, g2, depth)| Some((observer.arm_pair(g1, g2)?, depth)))
            .collect();
        observer
    }

    /// Records the contacts, geom heights and joints after one physics step of `tick`.
    pub fn after_step(&mut self, data: &MjData<Arc<MjModel>>, arm: &ArmSample, tick: u32) {
        for (g1, g2, depth) in touching(data) {
            self.touch(g1, g2, depth, tick);
        }
        if let Some(table_z) = self.table_z {
            let model = data.model();
            for &geom in &self.parts.arm_colliders {
                let clearance_m = lowest_z(model, data, geom) - table_z;
                if self.clearance.as_ref().is_none_or(|c| clearance_m < c.clearance_m) {
                    self.clearance = Some(Clearance {
                        link: self.parts.body_name[geom].clone(),
                        geom: self.parts.geom_name[geom].clone(),
                        clearance_m,
                        tick,
                    });
                }
            }
        }
        for (i, joint) in self.joints.iter_mut().enumerate() {
            let (q, v) = (arm.qpos[i], arm.qvel[i]);
            let Bounds { lo, hi } = self.ranges[i];
            if v.abs() > joint.peak_speed_rad_s {
                joint.peak_speed_rad_s = v.abs();
                self.speed_ticks[i] = tick;
            }
            joint.peak_accel_rad_s2 = joint.peak_accel_rad_s2.max(((v - self.prev_qvel[i]) / self.dt).abs());
            if joint.limit_first_tick.is_none() && (q <= lo + LIMIT_MARGIN_RAD || q >= hi - LIMIT_MARGIN_RAD) {
                joint.limit_first_tick = Some(tick);
            }
            let past = (lo - q).max(q - hi);
            if past > joint.past_limit_rad {
                if joint.past_limit_rad <= self.limits.past_limit_tolerance_rad {
                    self.past_ticks[i] = tick;
                }
                joint.past_limit_rad = past;
            }
            joint.final_qpos = q;
        }
        self.prev_qvel = arm.qvel;
    }

    /// Records an arm contact of penetration `depth` between two geoms (either order).
    fn touch(&mut self, g1: usize, g2: usize, depth: f64, tick: u32) {
        let Some((arm, other)) = self.arm_pair(g1, g2) else {
            return;
        };
        let parts = &self.parts.part;
        let start_depth_m = self
            .at_start
            .iter()
            .find(|(pair, _)| *pair == (arm, other))
            .map(|(_, depth)| *depth);
        let violation = self.violates(arm, other, depth, start_depth_m);
        if let Some(i) = self.pairs.iter().position(|&pair| pair == (arm, other)) {
            let seen = &mut self.contacts[i];
            seen.max_depth_m = seen.max_depth_m.max(depth);
            seen.violation |= violation;
            return;
        }
        let class = match parts[other] {
            Part::Arm { .. } => ContactClass::SelfContact,
            Part::Base => ContactClass::Base,
            Part::Fixed => ContactClass::Table,
            Part::Object => ContactClass::Object,
            Part::OtherArm => ContactClass::OtherArm,
        };
        self.pairs.push((arm, other));
        self.contacts.push(PreviewContact {
            link: self.parts.body_name[arm].clone(),
            geom: self.parts.geom_name[arm].clone(),
            other_body: self.parts.body_name[other].clone(),
            other_geom: self.parts.geom_name[other].clone(),
            class,
            max_depth_m: depth,
            first_tick: tick,
            start_depth_m,
            violation,
        });
    }

    /// The pair as (arm geom, other geom), the lower id first for two arm geoms; `None` when
    /// no arm geom is in it.
    fn arm_pair(&self, g1: usize, g2: usize) -> Option<(usize, usize)> {
        match (self.parts.part[g1], self.parts.part[g2]) {
            (Part::Arm { .. }, Part::Arm { .. }) => Some((g1.min(g2), g1.max(g2))),
            (Part::Arm { .. }, _) => Some((g1, g2)),
            (_, Part::Arm { .. }) => Some((g2, g1)),
            _ => None,
        }
    }

    /// A contact deeper than the tolerance is a violation, except the gripper's on an object
    /// and one there from the start that got no deeper than [`START_CONTACT_SLACK_M`].
    fn violates(&self, arm: usize, other: usize, depth: f64, start_depth: Option<f64>) -> bool {
        let grasp = matches!(
            (self.parts.part[arm], self.parts.part[other]),
            (Part::Arm { jaw: true }, Part::Object)
        );
        let allowed = start_depth.map_or(0.0, |d| d + START_CONTACT_SLACK_M);
        depth > self.limits.contact_tolerance_m + allowed && !grasp
    }

    /// Checks for a gripper stall at the end of `tick`, with the gripper's target.
    pub fn after_tick(&mut self, data: &MjData<Arc<MjModel>>, arm: &ArmSample, gripper_target: f64, tick: u32) {
        let gap = arm.qpos[GRIPPER_INDEX] - gripper_target;
        if gap <= STALL_GAP_RAD || arm.qvel[GRIPPER_INDEX].abs() >= STALL_SPEED_RAD_S {
            self.stall = None;
            return;
        }
        let mut blocked_by: Vec<String> = Vec::new();
        for (g1, g2, _) in touching(data) {
            for (jaw, other) in [(g1, g2), (g2, g1)] {
                if self.parts.part[jaw] == (Part::Arm { jaw: true })
                    && !matches!(self.parts.part[other], Part::Arm { .. })
                    && !blocked_by.contains(&self.parts.body_name[other])
                {
                    blocked_by.push(self.parts.body_name[other].clone());
                }
            }
        }
        let first_tick = self.stall.as_ref().map_or(tick, |s| s.first_tick);
        self.stall = Some(GripperStall {
            first_tick,
            gap_rad: gap,
            blocked_by,
        });
    }

    /// The report, with the violations in order of first tick.
    pub fn finish(self, ticks: u32, substeps_per_tick: u32) -> PreviewReport {
        let mut violations: Vec<Violation> = self
            .contacts
            .iter()
            .filter(|c| c.violation)
            .map(|c| Violation {
                kind: match c.class {
                    ContactClass::Table => ViolationKind::TableContact,
                    ContactClass::Base => ViolationKind::BaseContact,
                    ContactClass::SelfContact => ViolationKind::SelfContact,
                    ContactClass::Object => ViolationKind::ObjectContact,
                    ContactClass::OtherArm => ViolationKind::ArmContact,
                },
                links: vec![c.link.clone(), c.other_body.clone()],
                first_tick: c.first_tick,
                value: c.max_depth_m,
            })
            .collect();
        for (i, joint) in self.joints.iter().enumerate() {
            let label = self.parts.arm.label(Joint::ALL[i]);
            if joint.past_limit_rad > self.limits.past_limit_tolerance_rad {
                violations.push(Violation {
                    kind: ViolationKind::JointLimit,
                    links: vec![label.clone()],
                    first_tick: self.past_ticks[i],
                    value: joint.past_limit_rad,
                });
            }
            if self
                .limits
                .max_joint_speed_rad_s
                .is_some_and(|max| joint.peak_speed_rad_s > max)
            {
                violations.push(Violation {
                    kind: ViolationKind::JointSpeed,
                    links: vec![label],
                    first_tick: self.speed_ticks[i],
                    value: joint.peak_speed_rad_s,
                });
            }
        }
        violations.sort_by_key(|v| v.first_tick);
        PreviewReport {
            ticks,
            substeps_per_tick,
            contacts: self.contacts,
            joints: self.joints,
            table_clearance: self.clearance,
            gripper_stall: self.stall,
            violations,
        }
    }
}

/// Every penetrating geom pair of the data's contacts, with its depth (m, positive).
fn touching(data: &MjData<Arc<MjModel>>) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
    data.contact().iter().filter_map(|contact| {
        let (Ok(g1), Ok(g2)) = (usize::try_from(contact.geom[0]), usize::try_from(contact.geom[1])) else {
            return None;
        };
        (contact.exclude == 0 && contact.dist < 0.0).then_some((g1, g2, -contact.dist))
    })
}
