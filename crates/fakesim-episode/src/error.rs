//! Why an episode call was refused or failed.

use crate::journal::JournalError;
use crate::tasks::TaskError;
use fakesim_twin::TwinError;
use fakesim_twin::image::EncodeError;

/// An episode call that was refused (nothing changed) or failed.
#[derive(Debug, thiserror::Error)]
pub enum EpisodeError {
    /// An episode is live; stop it first.
    #[error("episode {run} is already running; call StopEpisode first")]
    AlreadyRunning {
        /// The live run.
        run: String,
    },
    /// The server fixed the task; reset takes no scene arguments.
    #[error(
        "the server was started with --lock-task {suite} {task_index} {init_state_index}; call ResetTask without suite, task_index or init_state_index"
    )]
    TaskLocked {
        /// Locked suite.
        suite: String,
        /// Locked task.
        task_index: u32,
        /// Locked layout.
        init_state_index: u32,
    },
    /// The call needs a running episode.
    #[error("no episode is running (status {status}); call ResetTask first")]
    NotRunning {
        /// Current status.
        status: &'static str,
    },
    /// The step budget is used up.
    #[error("the episode's step budget ({max_steps} steps) is used up; only StopEpisode can be called")]
    StepLimit {
        /// The budget.
        max_steps: u64,
    },
    /// A task reference that names no task.
    #[error(transparent)]
    Task(#[from] TaskError),
    /// A move request that cannot be carried out.
    #[error("{0}")]
    BadRequest(String),
    /// The current mode or a safety latch does not allow motion (mirror mode, emergency stop).
    #[error("{message}")]
    Refused {
        /// The contract's name for the refusal (`mirror_mode`, `estop_latched`, ...).
        reason: &'static str,
        /// What to do about it.
        message: String,
    },
    /// The real arm failed during the call (bus lost, servo fault); the safety layers acted.
    #[error("hardware: {0}")]
    Hardware(String),
    /// The twin refused or failed.
    #[error(transparent)]
    Twin(#[from] TwinError),
    /// The run journal could not be written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// An image could not be encoded.
    #[error(transparent)]
    Image(#[from] EncodeError),
}

impl EpisodeError {
    /// The contract's name for this error (`already_running`, `step_limit`, ...).
    pub fn reason(&self) -> &'static str {
        match self {
            EpisodeError::AlreadyRunning { .. } => "already_running",
            EpisodeError::TaskLocked { .. } => "task_locked",
            EpisodeError::NotRunning { .. } => "not_running",
            EpisodeError::StepLimit { .. } => "step_limit",
            EpisodeError::Task(TaskError::UnknownSuite { .. }) => "unknown_suite",
            EpisodeError::Task(TaskError::UnknownTask { .. }) => "unknown_task",
            EpisodeError::Task(TaskError::UnknownInitState { .. }) => "unknown_init_state",
            EpisodeError::BadRequest(_) => "invalid_argument",
            EpisodeError::Refused { reason, .. } => reason,
            EpisodeError::Hardware(_) => "hardware_fault",
            EpisodeError::Twin(_) => "twin",
            EpisodeError::Journal(_) => "journal_write_failed",
            EpisodeError::Image(_) => "image_encoding_failed",
        }
    }
}
