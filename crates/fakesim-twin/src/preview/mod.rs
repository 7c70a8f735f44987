//! Preview: runs a chunk of servo targets on a scratch copy of the twin, from the arm's
//! measured state, and reports what would happen (contacts, joint peaks, the table clearance,
//! a gripper stall) with the violations a gate refuses the command for. The live twin is never
//! touched: [`Sim::preview`] runs on scratch data of the same `Sim`; through
//! [`crate::TwinHandle::preview`] the physics thread only checks the request and copies the
//! state, and the preview thread runs it.

mod observe;
mod parts;
mod queue;
mod report;

pub use observe::{STALL_GAP_RAD, STALL_SPEED_RAD_S};
pub use parts::TABLE_TOP_GEOM;
pub(crate) use queue::PreviewQueue;
pub use report::{
    Clearance, ContactClass, GripperStall, JointPreview, PreviewContact, PreviewReport, Violation, ViolationKind,
};

use crate::error::TwinError;
use crate::joints::{GRIPPER_INDEX, Joint};
use crate::sim::{SAVED_STATE, Sim, check_substeps};
use crate::values::{Bounds, Check, JointValues, ValueError, resolve};
use fakesim_arm::ArmSpec;
use feetech::delay::DelayLine;
use mujoco_rs::prelude::*;
use observe::{ArmSample, Observer};
use parts::PartMap;
use std::sync::Arc;

/// Most ticks one preview runs (actions plus horizon).
pub const MAX_PREVIEW_TICKS: u32 = 1_000;
/// Most physics steps one preview runs (10 s of simulated time at the default 5 ms step; about
/// 50 ms of the preview thread on a loaded 2-core machine).
pub const MAX_PREVIEW_STEPS: u32 = 2_000;
/// Fastest start speed a preview accepts for a joint (rad/s).
pub const MAX_START_SPEED_RAD_S: f64 = 50.0;

/// Where a preview starts: the arm's joints as measured. The rest of the scene (the objects)
/// is taken from the live twin.
#[derive(Debug, Clone, PartialEq)]
pub struct StartState {
    /// Joint positions (rad), action-key order; inside the joint ranges.
    pub qpos: [f64; 6],
    /// Joint velocities (rad/s), action-key order.
    pub qvel: [f64; 6],
    /// Servo targets in force at the start (rad); `None` holds `qpos`. Joints an action leaves
    /// out keep these.
    pub ctrl: Option<[f64; 6]>,
}

/// What counts as a violation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PreviewLimits {
    /// Penetration a contact may reach before it is a violation (m).
    pub contact_tolerance_m: f64,
    /// How far a joint may be driven past an end of its range (rad).
    pub past_limit_tolerance_rad: f64,
    /// Fastest a joint may move (rad/s); `None` does not check speed.
    pub max_joint_speed_rad_s: Option<f64>,
}

impl Default for PreviewLimits {
    fn default() -> Self {
        PreviewLimits {
            contact_tolerance_m: 0.0,
            past_limit_tolerance_rad: 2f64.to_radians(),
            max_joint_speed_rad_s: None,
        }
    }
}

/// A chunk to preview.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewRequest {
    /// Start state; `None` starts from the live twin's state (in `mirror` and `hil` the twin
    /// mirrors the measured arm).
    pub start: Option<StartState>,
    /// Servo targets, one per tick, in the forms `send_action` takes (joints left out keep
    /// their previous target).
    pub actions: Vec<JointValues>,
    /// Physics steps each action is held for; `None` is one control tick.
    pub substeps_per_action: Option<u32>,
    /// Ticks run after the last action, holding its targets.
    pub horizon_ticks: u32,
    /// What counts as a violation.
    pub limits: PreviewLimits,
}

impl PreviewRequest {
    /// A chunk of actions, one control tick each, with a horizon, from the live twin's state.
    pub fn new(actions: Vec<JointValues>, horizon_ticks: u32) -> Self {
        PreviewRequest {
            start: None,
            actions,
            substeps_per_action: None,
            horizon_ticks,
            limits: PreviewLimits::default(),
        }
    }
}

/// The preview's private physics: scratch data of the twin's model and its parts, made once.
pub(crate) struct Scratch {
    data: MjData<Arc<MjModel>>,
    /// The parts as each arm sees them, in the scene's arm order.
    parts: Vec<PartMap>,
}

impl Scratch {
    /// Scratch data of `model`, whose parts were mapped as `parts` (one map per arm).
    pub(crate) fn new(model: &Arc<MjModel>, parts: Vec<PartMap>) -> Self {
        Scratch {
            data: MjData::new(model.clone()),
            parts,
        }
    }
}

/// A checked preview, ready to run on scratch data anywhere: the live state it starts from,
/// every tick's targets and what to watch.
pub(crate) struct PreviewJob {
    live: Box<[f64]>,
    start: Option<StartState>,
    start_ctrl: [f64; 6],
    start_qvel: [f64; 6],
    targets: Vec<[f64; 6]>,
    ticks: u32,
    substeps: u32,
    joints: [(usize, usize, usize); 6],
    ranges: [Bounds; 6],
    limits: PreviewLimits,
    /// The arm previewed: an index into the scene's arms.
    arm: usize,
    /// The arm's setpoints on their way to its servos when the chunk starts, each joint's held
    /// back by its transport delay ([`feetech::delay`]).
    line: DelayLine<6>,
    /// The twin time the chunk starts at (s).
    t0: f64,
    /// The physics step (s).
    dt: f64,
}

impl Sim {
    /// Runs `request` on the scratch copy and reports what would happen. Every input is checked
    /// before anything runs; the live twin's state is not changed.
    pub fn preview(&mut self, request: &PreviewRequest) -> Result<PreviewReport, TwinError> {
        let job = self.preview_job(request)?;
        if self.scratch.is_none() {
            let model = self.model().clone();
            self.scratch = Some(Box::new(Scratch::new(&model, PartMap::each_arm(&model, &self.arms())?)));
        }
        let Some(scratch) = self.scratch.as_deref_mut() else {
            return Err(TwinError::Stopped);
        };
        job.run(scratch)
    }

    /// Checks `request` and takes the live state it starts from, for [`PreviewJob::run`].
    pub(crate) fn preview_job(&self, request: &PreviewRequest) -> Result<PreviewJob, TwinError> {
        let substeps = request.substeps_per_action.unwrap_or(self.substeps_per_tick());
        let ticks = check_ticks(request.actions.len(), request.horizon_ticks, substeps)?;
        let (start_ctrl, start_qvel) = match &request.start {
            Some(start) => (
                check_start(self.arm(), start, &self.joint_ranges(), &self.ctrl_ranges())?,
                start.qvel,
            ),
            None => (self.arm_ctrl(), self.arm_qvel()),
        };
        Ok(PreviewJob {
            live: self.data.state(SAVED_STATE),
            start: request.start.clone(),
            start_ctrl,
            start_qvel,
            targets: chain_targets(self.arm(), start_ctrl, &request.actions, &self.ctrl_ranges())?,
            ticks,
            substeps,
            joints: self.joint_addresses(),
            ranges: self.joint_ranges(),
            limits: request.limits,
            arm: self.focus_index(),
            line: match &request.start {
                // A start state of its own: its setpoints drive the servos at once.
                Some(_) => DelayLine::new(self.arm_delay_s(), start_ctrl),
                None => self.delay_line().clone(),
            },
            t0: self.data.time(),
            dt: self.model().opt().timestep,
        })
    }
}

impl PreviewJob {
    /// Runs the preview on `scratch`, from the live state taken with the job.
    pub(crate) fn run(mut self, scratch: &mut Scratch) -> Result<PreviewReport, TwinError> {
        let joints = self.joints;
        let data = &mut scratch.data;
        data.set_state(&self.live, SAVED_STATE)
            .map_err(|e| TwinError::Scene(format!("cannot copy the twin's state: {e}")))?;
        if let Some(start) = &self.start {
            for (i, &(qadr, dadr, _)) in joints.iter().enumerate() {
                data.qpos_mut()[qadr] = start.qpos[i];
                data.qvel_mut()[dadr] = start.qvel[i];
            }
        }
        data.forward();
        let sample = |data: &MjData<Arc<MjModel>>| ArmSample {
            qpos: std::array::from_fn(|i| data.qpos()[joints[i].0]),
            qvel: std::array::from_fn(|i| data.qvel()[joints[i].1]),
        };
        let parts = scratch
            .parts
            .get(self.arm)
            .ok_or_else(|| TwinError::Scene(format!("the preview has no parts of arm {}", self.arm)))?;
        let mut observer = Observer::new(parts, self.limits, self.ranges, data, self.start_qvel);
        let mut target = self.start_ctrl;
        let mut step = 0u64;
        self.line.write(self.t0, target);
        for tick in 0..self.ticks {
            if let Some(next) = self.targets.get(tick as usize) {
                target = *next;
                self.line.write(self.t0 + step as f64 * self.dt, target);
            }
            for _ in 0..self.substeps {
                let t = self.t0 + step as f64 * self.dt;
                for (i, &(_, _, actuator)) in joints.iter().enumerate() {
                    data.ctrl_mut()[actuator] = self.line.acting_over(i, t, t + self.dt);
                }
                step += 1;
                data.step();
                observer.after_step(data, &sample(data), tick);
            }
            data.forward();
            observer.after_tick(data, &sample(data), target[GRIPPER_INDEX], tick);
        }
        Ok(observer.finish(self.ticks, self.substeps))
    }
}

/// Checks a chunk's size: the hold per action (`1..=MAX_SUBSTEPS_PER_ACTION` steps) and the
/// ticks, actions plus horizon (`1..=MAX_PREVIEW_TICKS`, at most `MAX_PREVIEW_STEPS` steps);
/// returns the ticks.
pub fn check_ticks(actions: usize, horizon_ticks: u32, substeps: u32) -> Result<u32, TwinError> {
    check_substeps(substeps)?;
    let ticks = (actions as u64).saturating_add(u64::from(horizon_ticks));
    let max_ticks = u64::from(MAX_PREVIEW_TICKS.min(MAX_PREVIEW_STEPS / substeps).max(1));
    if ticks == 0 || ticks > max_ticks {
        return Err(TwinError::CountOutOfRange {
            what: "preview ticks (actions + horizon)",
            value: ticks,
            lo: 1,
            hi: max_ticks,
        });
    }
    // At most MAX_PREVIEW_TICKS, so it fits.
    Ok(ticks as u32)
}

/// Checks a start state and returns the servo targets it starts with.
fn check_start(
    arm: &ArmSpec,
    start: &StartState,
    ranges: &[Bounds; 6],
    ctrl_ranges: &[Bounds; 6],
) -> Result<[f64; 6], TwinError> {
    resolve(arm, &JointValues::Ordered(start.qpos.to_vec()), Check::Within(ranges))?;
    let speed = Bounds {
        lo: -MAX_START_SPEED_RAD_S,
        hi: MAX_START_SPEED_RAD_S,
    };
    if let Some(i) = start.qvel.iter().position(|v| !(speed.lo..=speed.hi).contains(v)) {
        let label = arm.label(Joint::ALL[i]);
        let value = start.qvel[i];
        if !value.is_finite() {
            return Err(TwinError::Value(ValueError::NonFinite {
                key: format!("start velocity of {label}"),
                value,
            }));
        }
        return Err(TwinError::Value(ValueError::OutOfRange {
            joint: label.to_owned(),
            value,
            lo: speed.lo,
            hi: speed.hi,
            unit: "rad/s",
            hint: None,
        }));
    }
    match start.ctrl {
        Some(ctrl) => {
            resolve(arm, &JointValues::Ordered(ctrl.to_vec()), Check::Within(ctrl_ranges))?;
            Ok(ctrl)
        }
        None => Ok(std::array::from_fn(|i| {
            start.qpos[i].clamp(ctrl_ranges[i].lo, ctrl_ranges[i].hi)
        })),
    }
}

/// Checks every action of a chunk for `arm` against the servo setpoint ranges (names, lengths,
/// values), refusing with the index of the first one refused.
pub fn check_actions(
    arm: &ArmSpec,
    actions: &[JointValues],
    ctrl_ranges: &[Bounds; 6],
) -> Result<(), (usize, TwinError)> {
    for (index, action) in actions.iter().enumerate() {
        resolve(arm, action, Check::Within(ctrl_ranges)).map_err(|e| (index, e.into()))?;
    }
    Ok(())
}

/// Every action as full targets: each one's joints over the previous targets, all checked.
fn chain_targets(
    arm: &ArmSpec,
    start: [f64; 6],
    actions: &[JointValues],
    ctrl_ranges: &[Bounds; 6],
) -> Result<Vec<[f64; 6]>, TwinError> {
    let mut targets = Vec::with_capacity(actions.len());
    let mut current = start;
    for action in actions {
        for (i, v) in resolve(arm, action, Check::Within(ctrl_ranges))? {
            current[i] = v;
        }
        targets.push(current);
    }
    Ok(targets)
}
