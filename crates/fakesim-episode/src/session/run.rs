//! A live run and its accounting: steps used against the budget, calls tallied by stop reason,
//! safety events counted, and the typed journal lines they make.

use super::events::Event;
use super::results::Status;
use crate::budget::Budget;
use crate::error::EpisodeError;
use crate::gripper::{GripperCommand, GripperState, GripperStop};
use crate::journal::Journal;
use crate::motion::MoveStop;
use crate::tasks::{TaskDef, TaskRef};
use fakesim_twin::Look;
use std::collections::BTreeMap;
use std::time::Instant;

/// Calls of a run by verb, then by stop reason.
pub(super) type Tally = BTreeMap<&'static str, BTreeMap<&'static str, u64>>;

/// Steps used and left at a point of a run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Steps {
    /// Steps used.
    pub(super) used: u64,
    /// Steps left.
    pub(super) left: u64,
}

/// The live (or last) episode.
pub(super) struct Run {
    pub(super) id: String,
    pub(super) task_ref: TaskRef,
    pub(super) task: &'static TaskDef,
    pub(super) budget: Budget,
    pub(super) step: u64,
    /// Each arm's gripper, in the engine's arm order.
    pub(super) grippers: Vec<GripperState>,
    pub(super) journal: Journal,
    pub(super) started: Instant,
    pub(super) calls: Tally,
    /// Safety events journaled during the run (refusals and stops of the safety layers).
    pub(super) safety_events: u64,
    /// The look the run's seed drew, when the twin has variations.
    pub(super) look: Option<Look>,
}

impl Run {
    /// What arm `arm`'s gripper was last told (open for an arm the engine does not have).
    pub(super) fn gripper_command(&self, arm: usize) -> GripperCommand {
        self.grippers
            .get(arm)
            .map_or(GripperCommand::Open, GripperState::command)
    }

    /// Journals one of the engine's events.
    pub(super) fn journal(&self, event: &Event) -> Result<(), EpisodeError> {
        Ok(self.journal.event(event.kind(), event)?)
    }

    /// Steps used and left now.
    pub(super) fn steps(&self) -> Steps {
        Steps {
            used: self.step,
            left: self.budget.left(self.step),
        }
    }

    /// Charges `ticks` steps to the run and tallies the call as `call` ended by `reason`.
    pub(super) fn charge(&mut self, ticks: u64, call: &'static str, reason: &'static str) {
        self.step += ticks;
        *self.calls.entry(call).or_default().entry(reason).or_default() += 1;
    }

    /// Calls over every verb and reason.
    pub(super) fn total_calls(&self) -> u64 {
        self.calls.values().flat_map(|m| m.values()).sum()
    }

    /// Journals that the budget is used up, once the run's steps reach it.
    pub(super) fn note_budget(&mut self) -> Result<(), EpisodeError> {
        if self.budget.used_up(self.step) {
            self.journal(&Event::BudgetExhausted { step: self.step })?;
        }
        Ok(())
    }
}

/// The state of a session: where it is and its live or last run.
pub(super) struct Session {
    pub(super) status: Status,
    pub(super) run: Option<Run>,
}

impl Session {
    /// The live run, or `not_running`.
    pub(super) fn running(&mut self) -> Result<&mut Run, EpisodeError> {
        let status = self.status;
        match self.run.as_mut() {
            Some(run) if status == Status::Running => Ok(run),
            _ => Err(EpisodeError::NotRunning { status: status.name() }),
        }
    }
}

/// A move's stop reason as the tally names it.
pub(super) fn move_stop_name(stop: &MoveStop) -> &'static str {
    match stop {
        MoveStop::Reached => "reached",
        MoveStop::Stalled => "stalled",
        MoveStop::StepCap => "step_cap",
        MoveStop::Budget => "budget",
    }
}

/// A gripper action's stop reason as the tally names it.
pub(super) fn gripper_stop_name(stop: &GripperStop) -> &'static str {
    match stop {
        GripperStop::Settled => "settled",
        GripperStop::StepCap => "step_cap",
        GripperStop::Budget => "budget",
        GripperStop::NoOp => "no_op",
    }
}
