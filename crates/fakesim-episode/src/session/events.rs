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
    /// An end-effector move ran (of arm `arm` of a pair).
    Move {
        #[serde(skip_serializing_if = "Option::is_none")]
        arm: Option<&'static str>,
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
    /// A gripper action ran (of arm `arm` of a pair).
    Gripper {
        #[serde(skip_serializing_if = "Option::is_none")]
        arm: Option<&'static str>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state() -> EefState {
        EefState {
            eef_pos_m: [0.2, 0.0, 0.9],
            eef_rpy_rad: [0.0, -0.4, 0.0],
            gripper_command: GripperCommand::Open,
            opening_m: 0.06,
        }
    }

    #[test]
    fn events_serialise_to_the_fields_their_lines_have_always_had() {
        let state = state();
        let state_json = json!({
            "eef_pos_m": [0.2, 0.0, 0.9], "eef_rpy_rad": [0.0, -0.4, 0.0],
            "gripper_command": "open", "opening_m": 0.06,
        });
        let moved = Event::Move {
            arm: None,
            delta_xyz: [0.0, 0.05, 0.0],
            delta_rpy: None,
            executed_steps: 2,
            stop_reason: MoveStop::StepCap,
            achieved_delta_xyz: [0.0, 0.01, 0.0],
            remaining_distance_m: 0.04,
            step_distances_m: &[0.004, 0.006],
            step: 7,
            state: &state,
        };
        let gripped = Event::Gripper {
            arm: Some("right"),
            command: GripperCommand::Close,
            executed_steps: 0,
            stop_reason: GripperStop::NoOp,
            opening_before_m: 0.001,
            opening_after_m: 0.001,
            openings_m: &[],
            step: 7,
            state: &state,
        };
        let called = Event::RobotCall {
            call: "tick",
            ticks: 1,
            step: 8,
            request: json!({"period_s": 0.05}),
        };
        let cases = [
            (
                moved,
                Kind::Move,
                json!({
                    "delta_xyz": [0.0, 0.05, 0.0], "delta_rpy": null, "executed_steps": 2,
                    "stop_reason": "step_cap", "achieved_delta_xyz": [0.0, 0.01, 0.0],
                    "remaining_distance_m": 0.04, "step_distances_m": [0.004, 0.006],
                    "step": 7, "state": state_json,
                }),
            ),
            (
                gripped,
                Kind::Gripper,
                json!({
                    "arm": "right", "command": "close", "executed_steps": 0, "stop_reason": "no_op",
                    "opening_before_m": 0.001, "opening_after_m": 0.001, "openings_m": [],
                    "step": 7, "state": state_json,
                }),
            ),
            (
                Event::Observe { step: 3, state: &state },
                Kind::Observe,
                json!({"step": 3, "state": state_json}),
            ),
            (
                called,
                Kind::RobotCall,
                json!({"call": "tick", "ticks": 1, "step": 8, "request": {"period_s": 0.05}}),
            ),
            (
                Event::BudgetExhausted { step: 9 },
                Kind::BudgetExhausted,
                json!({"step": 9}),
            ),
            (Event::Interrupted { step: 9 }, Kind::Interrupted, json!({"step": 9})),
            (
                Event::StopEpisode {
                    status: "stopped",
                    step: 9,
                },
                Kind::StopEpisode,
                json!({"status": "stopped", "step": 9}),
            ),
        ];
        for (event, kind, fields) in cases {
            assert_eq!(event.kind(), kind);
            assert_eq!(serde_json::to_value(&event).unwrap(), fields, "{}", kind.name());
        }
    }
}
