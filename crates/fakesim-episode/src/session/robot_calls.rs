//! What other crates journal in a live run: their own events (mode switches, safety stops,
//! access, twin faults), and the robot-service calls charged against the episode's budget.

use super::Engine;
use super::events::Event;
use crate::error::EpisodeError;
use crate::journal::Kind;

impl Engine {
    /// Records a notable event (mode switch, safety stop) in the live run's journal, if any.
    /// The line is queued in order and not waited for, so a task forwarding a burst of events
    /// never falls behind the calls that end the run: a write that fails is logged by the
    /// journal thread and reported by the next call that waits for the journal.
    pub async fn journal_event(&self, kind: Kind, fields: serde_json::Value) -> Result<(), EpisodeError> {
        let mut session = self.lock().await;
        let Ok(run) = session.running() else {
            return Ok(());
        };
        if kind == Kind::Safety {
            run.safety_events += 1;
        }
        Ok(run.journal.event(kind, &fields)?)
    }

    /// Refuses a robot-service call that moves the robot once a live episode's step budget is
    /// used up (`step_limit`); otherwise returns the ticks left (`u64::MAX` outside an episode
    /// or without a budget).
    pub async fn check_robot_call(&self) -> Result<u64, EpisodeError> {
        let mut session = self.lock().await;
        match session.running() {
            Ok(run) => run.budget.check(run.step),
            Err(_) => Ok(u64::MAX),
        }
    }

    /// Counts a robot-service call's control ticks against a live episode's budget and journals
    /// it as a `robot_call` event with `fields`; outside an episode it does nothing.
    pub async fn record_robot_call(
        &self,
        call: &'static str,
        ticks: u64,
        fields: serde_json::Value,
    ) -> Result<(), EpisodeError> {
        self.record_robot_calls(call, [(ticks, fields)]).await
    }

    /// [`Self::record_robot_call`] for several calls of one kind in a row (a chunk's ticks):
    /// each charged and journaled as its own line, the journal waited for once.
    pub async fn record_robot_calls(
        &self,
        call: &'static str,
        calls: impl IntoIterator<Item = (u64, serde_json::Value)>,
    ) -> Result<(), EpisodeError> {
        let flushed = {
            let mut session = self.lock().await;
            let Ok(run) = session.running() else {
                return Ok(());
            };
            for (ticks, fields) in calls {
                run.charge(ticks, call, "robot_service");
                run.journal(&Event::RobotCall {
                    call,
                    ticks,
                    step: run.step,
                    request: fields,
                })?;
                run.note_budget()?;
            }
            run.journal.flushed()
        };
        Ok(flushed.written().await?)
    }
}
