//! What the episode verbs answer: the session's status, the task, the arm's state, the
//! images, and each verb's outcome.

use super::run::Steps;
use crate::gripper::{GripperCommand, GripperReport};
use crate::journal::Artifacts;
use crate::motion::MoveReport;
use crate::tasks::{TaskDef, TaskRef};
use fakesim_twin::image::ImageTiming;
use fakesim_twin::{Pose, Sim};
use serde::Serialize;

/// Where the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// No episode yet.
    Idle,
    /// An episode is live.
    Running,
    /// The last episode was stopped.
    Stopped,
}

impl Status {
    /// The status as the API and refusals name it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Running => "running",
            Status::Stopped => "stopped",
        }
    }
}

/// A task as the client sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskInfo {
    /// Suite name.
    pub suite: String,
    /// Index in the suite.
    pub task_index: u32,
    /// Short name.
    pub name: String,
    /// Instruction in words.
    pub instruction: String,
    /// Layout index.
    pub init_state_index: u32,
}

impl TaskInfo {
    /// The client's view of `task`, started as `task_ref`.
    pub(super) fn new(task_ref: &TaskRef, task: &TaskDef) -> Self {
        TaskInfo {
            suite: task_ref.suite.clone(),
            task_index: task_ref.task_index,
            name: task.name.to_owned(),
            instruction: task.instruction.to_owned(),
            init_state_index: task_ref.init_state_index,
        }
    }

    /// The reference this task was started from.
    pub(super) fn task_ref(&self) -> TaskRef {
        TaskRef {
            suite: self.suite.clone(),
            task_index: self.task_index,
            init_state_index: self.init_state_index,
        }
    }
}

/// End-effector and gripper state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EefState {
    /// TCP position in the world (m; table surface at z = 0.80).
    pub eef_pos_m: [f64; 3],
    /// TCP orientation about the base X, Y, Z axes (rad): roll_x, pitch_y, yaw_z.
    pub eef_rpy_rad: [f64; 3],
    /// The gripper's target.
    pub gripper_command: GripperCommand,
    /// Distance between the jaw tips (m).
    pub opening_m: f64,
}

impl EefState {
    /// The state of the arm in `sim`, whose gripper was last told `command`.
    pub(super) fn read(sim: &Sim, command: GripperCommand) -> Self {
        let tcp: Pose = sim.tcp_pose();
        let (roll, pitch, yaw) = tcp.rotation().euler_angles();
        EefState {
            eef_pos_m: tcp.pos,
            eef_rpy_rad: [roll, pitch, yaw],
            gripper_command: command,
            opening_m: sim.gripper_opening_m(),
        }
    }
}

/// The two camera images as PNG bytes (empty for a camera the call did not ask for).
#[derive(Debug, Clone, PartialEq)]
pub struct Images {
    /// Scene camera.
    pub agentview: Vec<u8>,
    /// Wrist camera.
    pub robot0_eye_in_hand: Vec<u8>,
    /// How long drawing and encoding them took.
    pub timing: ImageTiming,
}

/// What every episode call returns besides its own fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Camera images of the cameras the call asked for; `None` when it asked for none.
    pub images: Option<Images>,
    /// Arm state.
    pub state: EefState,
    /// Steps used.
    pub step: u64,
    /// Steps left.
    pub steps_left: u64,
    /// Session status.
    pub status: Status,
}

impl Observation {
    /// An observation of a running episode at `steps`.
    pub(super) fn running(images: Option<Images>, state: EefState, steps: Steps) -> Self {
        Observation {
            images,
            state,
            step: steps.used,
            steps_left: steps.left,
            status: Status::Running,
        }
    }
}

/// Answer to a reset.
#[derive(Debug, Clone, PartialEq)]
pub struct ResetOutcome {
    /// New run id.
    pub run: String,
    /// The task started.
    pub task: TaskInfo,
    /// Images, state and budget.
    pub observation: Observation,
}

/// Answer to a move.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveOutcome {
    /// Images, state and budget after the move.
    pub observation: Observation,
    /// Requested translation (m).
    pub delta_xyz: [f64; 3],
    /// Requested rotation (rad), if any.
    pub delta_rpy: Option<[f64; 3]>,
    /// What the move did.
    pub report: MoveReport,
}

/// Answer to a gripper action.
#[derive(Debug, Clone, PartialEq)]
pub struct GripperOutcome {
    /// Images, state and budget after the action.
    pub observation: Observation,
    /// Requested command.
    pub command: GripperCommand,
    /// What the action did.
    pub report: GripperReport,
}

/// Answer to a stop.
#[derive(Debug, Clone, PartialEq)]
pub struct StopOutcome {
    /// The run stopped.
    pub run: String,
    /// Where its files are.
    pub artifacts: Artifacts,
    /// The task's judgement from the twin's object poses.
    pub success: bool,
    /// The policy-validation report (`summary.json`'s `validation`).
    pub validation: serde_json::Value,
}
