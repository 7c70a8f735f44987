//! The reads that drive nothing: the task listing, and the session's state, answered from
//! the progress the last call published, never waiting for a call in flight.

use super::Engine;
use super::results::{EefState, Status, TaskInfo};
use crate::budget::Budget;
use crate::error::EpisodeError;
use crate::tasks::{self, N_INIT_STATES, TaskError};

/// Answer to a session-info read.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// Current or last run id.
    pub run: Option<String>,
    /// Session status.
    pub status: Status,
    /// Steps used.
    pub step: u64,
    /// Episode budget (0: none).
    pub max_steps: u64,
    /// Steps left.
    pub steps_left: u64,
    /// Current or last task (absent while idle).
    pub task: Option<TaskInfo>,
    /// Whether the server fixed the task.
    pub task_locked: bool,
    /// Arm state (absent while idle).
    pub state: Option<EefState>,
    /// The scene a reset without arguments starts (only while idle).
    pub default_scene: Option<TaskInfo>,
    /// The task's judgement on the twin now, as the run's end would give it (only while running).
    pub success: Option<bool>,
}

/// A suite's name and task count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteSummary {
    /// Suite name.
    pub name: String,
    /// Tasks in it.
    pub n_tasks: u32,
}

/// One task row of a suite listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSummary {
    /// Index in the suite.
    pub task_index: u32,
    /// Short name.
    pub name: String,
    /// Instruction.
    pub instruction: String,
    /// Layouts available.
    pub n_init_states: u32,
}

/// Answer to a task listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskListing {
    /// Every suite.
    pub suites: Vec<SuiteSummary>,
    /// Tasks over all suites.
    pub total_tasks: u32,
    /// The tasks of the suite asked for, if one was.
    pub tasks: Vec<TaskSummary>,
}

impl Engine {
    /// Suites, and the tasks of one suite when named.
    pub fn list_tasks(&self, suite: Option<&str>) -> Result<TaskListing, EpisodeError> {
        let arms = self.twin.arms().len();
        let tasks = match suite {
            None => Vec::new(),
            Some(name) => {
                let suite = tasks::suite(name)?;
                if suite.arms > arms {
                    return Err(TaskError::NeedsPair { suite: suite.name }.into());
                }
                suite
                    .tasks
                    .iter()
                    .enumerate()
                    .map(|(i, t)| TaskSummary {
                        task_index: i as u32,
                        name: t.name.to_owned(),
                        instruction: t.instruction.to_owned(),
                        n_init_states: N_INIT_STATES,
                    })
                    .collect()
            }
        };
        let suites: Vec<SuiteSummary> = tasks::suites_for(arms)
            .map(|suite| SuiteSummary {
                name: suite.name.to_owned(),
                n_tasks: suite.tasks.len() as u32,
            })
            .collect();
        Ok(TaskListing {
            total_tasks: suites.iter().map(|suite| suite.n_tasks).sum(),
            suites,
            tasks,
        })
    }

    /// Where the session is; no images, no budget. Answers from the progress published when
    /// the last call finished, and the arm as it is now: it never waits for a call in flight.
    pub async fn session_info(&self) -> Result<SessionInfo, EpisodeError> {
        let progress = self.progress.borrow().clone();
        let task_locked = self.config.locked_task.is_some();
        let budget = progress.budget.unwrap_or(Budget::asked(None, self.config.max_steps));
        let max_steps = budget.max_steps();
        let Some(run) = progress.run else {
            let default = self.config.default_task();
            let default_scene = default.task().ok().map(|task| TaskInfo::new(&default, task));
            return Ok(SessionInfo {
                run: None,
                status: Status::Idle,
                step: 0,
                max_steps,
                steps_left: budget.left(0),
                task: None,
                task_locked,
                state: None,
                default_scene,
                success: None,
            });
        };
        let command = progress.command;
        let judged = progress
            .task
            .as_ref()
            .filter(|_| progress.status == Status::Running)
            .and_then(|info| info.task_ref().task().ok());
        let (state, success) = self
            .twin
            .try_with_sim(move |sim| {
                let success = judged.map(|task| tasks::success(task, sim)).transpose()?;
                Ok((EefState::read(sim, command), success))
            })
            .await?;
        Ok(SessionInfo {
            run: Some(run),
            status: progress.status,
            step: progress.step,
            max_steps,
            steps_left: budget.left(progress.step),
            task: progress.task,
            task_locked,
            state: Some(state),
            default_scene: None,
            success,
        })
    }
}
