//! The engine's journal events, typed: each variant's fields serialise to the fields of its
//! line in `events.jsonl`, next to the `t` and `kind` the journal adds.

use super::results::{EefState, TaskInfo};
use crate::gripper::{GripperCommand, GripperStop};
use crate::journal::Kind;
use crate::motion::MoveStop;
use crate::tasks::Layout;
use serde::Serialize;
use serde_json::Value;

/// One event the engine journals itself.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub(super) enum Event<'a> {
    /// An episode started.
    ResetTask {
        run: &'a str,
        task: TaskInfo,
        layout: Layout,
        /// Ticks, or null for no budget.
        max_steps: Option<u64>,
        control_period_s: f64,
    },
    /// An observation was taken.
    Observe { step: u64, state: &'a EefState },
    /// An end-effector move ran.
    Move {
        delta_xyz: [f64; 3],
        delta_rpy: Option<[f64; 3]>,
        executed_steps: u32,
        stop_reason: MoveStop,
        achieved_delta_xyz: [f64; 3],
        remaining_distance_m: f64,
        step_distances_m: &'a [f64],
        step: u64,
        state: &'a EefState,
    },
    /// A gripper action ran.
    Gripper {
        command: GripperCommand,
        executed_steps: u32,
        stop_reason: GripperStop,
        opening_before_m: f64,
        opening_after_m: f64,
        openings_m: &'a [f64],
        step: u64,
        state: &'a EefState,
    },
    /// A robot-service call moved the robot during the episode.
    RobotCall {
        call: &'a str,
        ticks: u64,
        step: u64,
        /// The call's own fields, as its service wrote them.
        request: Value,
    },
    /// The step budget ran out.
    BudgetExhausted { step: u64 },
    /// The episode was ended by a shutdown.
    Interrupted { step: u64 },
    /// The episode ended (`stopped` or `interrupted`).
    StopEpisode { status: &'a str, step: u64 },
}

impl Event<'_> {
    /// The line's `kind`.
    pub(super) fn kind(&self) -> Kind {
        match self {
            Event::ResetTask { .. } => Kind::ResetTask,
            Event::Observe { .. } => Kind::Observe,
            Event::Move { .. } => Kind::Move,
            Event::Gripper { .. } => Kind::Gripper,
            Event::RobotCall { .. } => Kind::RobotCall,
            Event::BudgetExhausted { .. } => Kind::BudgetExhausted,
            Event::Interrupted { .. } => Kind::Interrupted,
            Event::StopEpisode { .. } => Kind::StopEpisode,
        }
    }
}
