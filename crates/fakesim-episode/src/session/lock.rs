//! The session's lock, and the progress it publishes whenever a call lets go of it.

use super::results::{Status, TaskInfo};
use super::run::Session;
use crate::budget::Budget;
use crate::gripper::GripperCommand;
use tokio::sync::{MutexGuard, watch};

/// Where the session stood when its lock was last released: what a session-info read reports
/// besides the arm, so that read never waits for a call in flight (a render, a move).
#[derive(Debug, Clone)]
pub(super) struct Progress {
    pub(super) run: Option<String>,
    pub(super) status: Status,
    pub(super) budget: Option<Budget>,
    pub(super) step: u64,
    pub(super) task: Option<TaskInfo>,
    pub(super) command: GripperCommand,
}

impl Progress {
    /// What `session` reports now.
    pub(super) fn of(session: &Session) -> Self {
        let run = session.run.as_ref();
        Progress {
            run: run.map(|r| r.id.clone()),
            status: session.status,
            budget: run.map(|r| r.budget),
            step: run.map_or(0, |r| r.step),
            task: run.map(|r| TaskInfo::new(&r.task_ref, r.task)),
            command: run.map_or(GripperCommand::Open, |r| r.gripper_command(0)),
        }
    }
}

/// The session, locked; releasing it publishes the session's progress.
pub(super) struct Locked<'a> {
    pub(super) session: MutexGuard<'a, Session>,
    pub(super) progress: &'a watch::Sender<Progress>,
}

impl std::ops::Deref for Locked<'_> {
    type Target = Session;
    fn deref(&self) -> &Session {
        &self.session
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Session {
        &mut self.session
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        self.progress.send_replace(Progress::of(&self.session));
    }
}
