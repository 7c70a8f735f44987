//! The requests that move the twin or the arm, as values, and what each did.

use super::calls::Call;
use crate::wire::tick::ImageRequest;
use fakesim_arm::Side;
use fakesim_bridge::hil::{Mode, ModeSwitch, SyncOption};
use fakesim_episode::session::{GripperOutcome, MoveOutcome, ResetOutcome, StopOutcome};
use fakesim_episode::ticks::Observed;
use fakesim_episode::{GripperCommand, ResetRequest};
use fakesim_twin::sim::SetJointsReport;
use fakesim_twin::{CameraSnapshot, FrameRoom, JointValues, TickClock};
use std::sync::Arc;
use tonic::Status;

/// One tick of the client's clock.
#[derive(Debug, Clone)]
pub struct TickMotion {
    /// The targets (rad) of each arm the daemon drives, in the order of its arms.
    pub actions: Vec<JointValues>,
    /// This tick's own period (s, checked), or `None` for the period in force.
    pub period_s: Option<f64>,
    /// The frames to take after the tick.
    pub images: Option<ImageRequest>,
}

/// A request that moves the twin or the arm, or changes what may move them.
#[derive(Debug)]
pub enum Motion {
    /// Starts an episode (in `hil` the arm goes home first).
    ResetTask(ResetRequest),
    /// Moves the end effector (of one arm of a pair).
    Move {
        /// The arm of a pair; `None` for an arm alone.
        arm: Option<Side>,
        /// Translation (m).
        delta_xyz: [f64; 3],
        /// Rotation (rad), if asked.
        delta_rpy: Option<[f64; 3]>,
    },
    /// Opens or closes the gripper (of one arm of a pair).
    Gripper {
        /// The arm of a pair; `None` for an arm alone.
        arm: Option<Side>,
        /// Open or close.
        command: GripperCommand,
    },
    /// Ends the episode.
    StopEpisode,
    /// Writes joint targets and holds them for some physics steps.
    SendAction {
        /// The targets (rad).
        action: JointValues,
        /// Physics steps to hold them.
        n_substeps: u32,
    },
    /// Writes joint targets and holds them one tick of the client's clock; frames as asked.
    Tick(TickMotion),
    /// Ticks in order under one hold of the robot; in `hil` paced at their periods.
    TickChunk(Vec<TickMotion>),
    /// Steps the physics with the targets in force.
    Step {
        /// Physics steps.
        n_steps: u32,
    },
    /// Puts joints at positions.
    SetJointPositions {
        /// The positions (rad) of each arm, in the order of the daemon's arms (an arm given
        /// no value is left alone).
        positions: Vec<JointValues>,
        /// Whether the setpoints move there too.
        hold: bool,
    },
    /// Sets joint velocities.
    SetJointVelocities {
        /// The velocities (rad/s).
        velocities: JointValues,
    },
    /// Restores a saved state.
    LoadState {
        /// Its name (checked as a path component).
        name: String,
    },
    /// Switches the mode.
    SetMode {
        /// The mode asked for.
        mode: Mode,
        /// How arm and twin are brought together entering `hil`.
        sync: SyncOption,
        /// The sync speed, overriding the configured one.
        sync_speed_rad_s: Option<f64>,
    },
    /// Clears the latched emergency stops of these arms (their sides; `None`: the one arm).
    ResetEmergencyStop(Vec<Option<Side>>),
    /// Sets the control period of `Tick` (s; 0: the model's tick).
    SetControlPeriod {
        /// The period asked for.
        period_s: f64,
    },
}

impl Motion {
    /// The call this request came as.
    pub fn call(&self) -> Call {
        match self {
            Motion::ResetTask(_) => Call::ResetTask,
            Motion::Move { .. } => Call::Move,
            Motion::Gripper { .. } => Call::Gripper,
            Motion::StopEpisode => Call::StopEpisode,
            Motion::SendAction { .. } => Call::SendAction,
            Motion::Tick(_) => Call::Tick,
            Motion::TickChunk(_) => Call::TickChunk,
            Motion::Step { .. } => Call::Step,
            Motion::SetJointPositions { .. } => Call::SetJointPositions,
            Motion::SetJointVelocities { .. } => Call::SetJointVelocities,
            Motion::LoadState { .. } => Call::LoadState,
            Motion::SetMode { .. } => Call::SetMode,
            Motion::ResetEmergencyStop(_) => Call::ResetEmergencyStop,
            Motion::SetControlPeriod { .. } => Call::SetControlPeriod,
        }
    }

    /// Whether only the simulation can do it (refused in `mirror` and `hil`).
    pub fn sim_only(&self) -> bool {
        matches!(
            self,
            Motion::Step { .. }
                | Motion::SetJointPositions { .. }
                | Motion::SetJointVelocities { .. }
                | Motion::LoadState { .. }
        )
    }

    /// Whether it drives one arm's joints or tool without naming the arm: refused on a pair,
    /// whose arms move together through `Tick` and `TickChunk` (a move or a gripper action
    /// names its arm).
    pub fn one_arm(&self) -> bool {
        matches!(
            self,
            Motion::Move { arm: None, .. }
                | Motion::Gripper { arm: None, .. }
                | Motion::SendAction { .. }
                | Motion::SetJointVelocities { .. }
        )
    }

    /// Whether it can name the arm it drives (`Move`, `Gripper`).
    pub fn takes_arm(&self) -> bool {
        matches!(self, Motion::Move { .. } | Motion::Gripper { .. })
    }

    /// The arms it moves, as indices into the daemon's `count` arms: those a tick, a chunk or a
    /// joint write gives values, those whose stop it resets, else (and when that is none) every
    /// arm.
    pub fn arms_moved(&self, count: usize) -> Vec<usize> {
        let given = |actions: &[JointValues], arm: usize| actions.get(arm).is_some_and(super::moves);
        let moved: Vec<usize> = (0..count)
            .filter(|&arm| match self {
                Motion::Tick(tick) => given(&tick.actions, arm),
                Motion::TickChunk(ticks) => ticks.iter().any(|tick| given(&tick.actions, arm)),
                Motion::SetJointPositions { positions, .. } => given(positions, arm),
                Motion::ResetEmergencyStop(sides) => sides.iter().any(|side| side.map_or(0, Side::index) == arm),
                Motion::Move { arm: Some(side), .. } | Motion::Gripper { arm: Some(side), .. } => side.index() == arm,
                _ => true,
            })
            .collect();
        if moved.is_empty() { (0..count).collect() } else { moved }
    }

    /// Whether it is a robot-service call counted against a live episode's budget.
    pub fn counts_against_budget(&self) -> bool {
        matches!(
            self,
            Motion::SendAction { .. }
                | Motion::Tick(_)
                | Motion::TickChunk(_)
                | Motion::Step { .. }
                | Motion::SetJointPositions { .. }
                | Motion::SetJointVelocities { .. }
                | Motion::LoadState { .. }
        )
    }
}

/// What one tick did: the robot after it, and the cameras' state to draw.
#[derive(Debug)]
pub struct Ticked {
    /// Each arm after the tick, in the order of the daemon's arms.
    pub after: Vec<Observed>,
    /// The scene to draw, when frames were asked for.
    pub shot: Option<CameraSnapshot>,
    /// The room reserved in the render backlog for the frames before the tick ran (shared by
    /// a chunk's ticks, whose frames are drawn one tick after the other).
    pub room: Option<Arc<FrameRoom>>,
}

impl Ticked {
    /// The setpoints every arm held (rad), arm after arm: what the journal records.
    pub fn ctrl(&self) -> Vec<f64> {
        self.after.iter().flat_map(|arm| arm.robot.ctrl).collect()
    }

    /// Whether a guard held any arm since the previous tick.
    pub fn blocked(&self) -> bool {
        self.after.iter().any(|arm| arm.blocked)
    }

    /// The simulation time after the tick (s).
    pub fn time(&self) -> f64 {
        self.after.first().map_or(0.0, |arm| arm.robot.time)
    }
}

/// What a motion did.
#[derive(Debug)]
pub enum Done {
    /// The episode started.
    Reset(Box<ResetOutcome>),
    /// The move ran.
    Moved(Box<MoveOutcome>),
    /// The gripper action ran.
    Gripped(Box<GripperOutcome>),
    /// The episode ended.
    Stopped(Box<StopOutcome>),
    /// The targets were held; the robot after.
    Acted(Box<Observed>),
    /// The tick ran.
    Ticked(Box<Ticked>),
    /// The chunk's ticks ran, up to a refusal of one after the first.
    Chunk {
        /// Each tick run, in order.
        ticks: Vec<Ticked>,
        /// The refusal that ended the chunk early, and the index of the tick refused.
        stopped: Option<(usize, Status)>,
    },
    /// The physics stepped, or a state was restored; the simulation time after (s).
    Timed(f64),
    /// Joints were put at positions.
    PositionsSet(SetJointsReport),
    /// Joint velocities were set.
    VelocitiesSet,
    /// The mode switched.
    ModeSwitched(ModeSwitch),
    /// The emergency stop was cleared; whether it had been latched.
    EstopReset(bool),
    /// The control period in force now.
    PeriodSet(TickClock),
}
