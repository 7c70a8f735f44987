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
    /// The actuation (the real arm's side: mode, safety layers, bus) refused or failed the call;
    /// the source is the actuation's own error.
    #[error(transparent)]
    Actuation(Box<dyn std::error::Error + Send + Sync + 'static>),
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
