//! The episode engine: one episode at a time over the twin, with the session contract's
//! states, step budget, task lock, journal and images.
//!
//! Each verb holds the session lock while it moves the twin, charges the run and queues its
//! journal lines; the images are drawn, encoded and written, and the lines waited for, after
//! it lets go.

mod actions;
mod config;
mod episode;
mod events;
mod images;
mod lock;
mod reads;
mod requests;
mod results;
mod robot_calls;
mod run;
mod run_id;
mod validation;

pub use config::{EngineConfig, MAX_STEPS_PER_CALL, within_limits};
pub use images::CAMERAS;
pub use reads::{SessionInfo, SuiteSummary, TaskListing, TaskSummary};
pub use requests::{MAX_MOVE_M, ResetRequest};
pub use results::{
    EefState, GripperOutcome, Images, MoveOutcome, Observation, ResetOutcome, Status, StopOutcome, TaskInfo,
};

use crate::actuation::{Actuation, SimActuation};
use crate::tap::JournalTap;
use fakesim_twin::TwinHandle;
use lock::{Locked, Progress};
use run::Session;
use std::sync::Arc;
use tokio::sync::{Mutex, watch};

/// Runs episodes on a twin. Driving calls are serialised; reads may come from anywhere.
pub struct Engine {
    twin: TwinHandle,
    config: EngineConfig,
    session: Mutex<Session>,
    progress: watch::Sender<Progress>,
    /// Each arm's moves and gripper actions, in the twin's order (a pair's left first).
    arms: Vec<ArmActuation>,
    tap: JournalTap,
}

/// How one arm's moves and gripper actions run.
pub struct ArmActuation {
    /// The twin, its per-arm calls acting on this arm.
    pub twin: TwinHandle,
    /// Where the arm's per-tick loops run.
    pub actuation: Arc<dyn Actuation>,
}

impl Engine {
    /// An idle engine over a twin, moving it in lock-step.
    pub fn new(twin: TwinHandle, config: EngineConfig) -> Self {
        Self::with_actuation(twin, config, Arc::new(SimActuation))
    }

    /// An idle engine whose moves and gripper actions run through `actuation`.
    pub fn with_actuation(twin: TwinHandle, config: EngineConfig, actuation: Arc<dyn Actuation>) -> Self {
        let arm = ArmActuation {
            twin: twin.clone(),
            actuation,
        };
        Self::with_arms(twin, config, vec![arm])
    }

    /// An idle engine over a twin of several arms, each moved through its own actuation.
    pub fn with_arms(twin: TwinHandle, config: EngineConfig, arms: Vec<ArmActuation>) -> Self {
        let session = Session {
            status: Status::Idle,
            run: None,
        };
        Engine {
            twin,
            config,
            progress: watch::Sender::new(Progress::of(&session)),
            session: Mutex::new(session),
            arms,
            tap: JournalTap::default(),
        }
    }

    /// The tap every run's journal lines and frames, and each move's target, are handed to.
    pub fn tap(&self) -> &JournalTap {
        &self.tap
    }

    /// The engine's settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Locks the session for a call; every change is published when the call lets go.
    async fn lock(&self) -> Locked<'_> {
        Locked {
            session: self.session.lock().await,
            progress: &self.progress,
        }
    }
}
