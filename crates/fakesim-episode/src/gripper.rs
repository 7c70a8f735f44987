//! Gripper actions: the command, the settle rule kept across calls, and the four stop reasons.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Ticks of one command before the gripper may count as settled.
pub const MIN_COMMAND_TICKS: u32 = 10;
/// Recent openings compared to judge settling.
pub const SETTLE_WINDOW: usize = 2;
/// Less spread than this over the window is settled (m).
pub const SETTLE_EPSILON_M: f64 = 0.0005;

/// Open or close.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GripperCommand {
    /// Jaws apart.
    Open,
    /// Jaws together.
    Close,
}

/// Why a gripper action returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GripperStop {
    /// The opening stopped changing after enough ticks of the command.
    Settled,
    /// The per-call tick cap was hit before the opening settled.
    StepCap,
    /// The episode's step budget ran out.
    Budget,
    /// Same command as the current one with nothing pending: nothing was done.
    NoOp,
}

/// What a gripper action did.
#[derive(Debug, Clone, PartialEq)]
pub struct GripperReport {
    /// Control ticks run.
    pub executed_steps: u32,
    /// Why it stopped.
    pub stop: GripperStop,
    /// Opening before the call (m).
    pub opening_before_m: f64,
    /// Opening after each tick (m), for the journal; empty for a no-op.
    pub openings_m: Vec<f64>,
}

impl GripperReport {
    /// Opening after the call (m): the last tick's, or the one before for a no-op.
    pub fn opening_after_m(&self) -> f64 {
        self.openings_m.last().copied().unwrap_or(self.opening_before_m)
    }
}

/// The gripper's command and settle history, kept for the whole episode.
#[derive(Debug, Clone)]
pub struct GripperState {
    command: GripperCommand,
    pending: bool,
    ticks_of_command: u32,
    openings: VecDeque<f64>,
}

impl GripperState {
    /// A gripper that was told `command` and has settled.
    pub fn settled(command: GripperCommand) -> Self {
        GripperState {
            command,
            pending: false,
            ticks_of_command: MIN_COMMAND_TICKS,
            openings: VecDeque::new(),
        }
    }

    /// The current target.
    pub fn command(&self) -> GripperCommand {
        self.command
    }

    /// Starts a call: `Some(NoOp)` when there is nothing to do, otherwise the command is taken.
    pub fn begin(&mut self, command: GripperCommand) -> Option<GripperStop> {
        if command == self.command && !self.pending {
            return Some(GripperStop::NoOp);
        }
        if command != self.command {
            self.command = command;
            self.ticks_of_command = 0;
            self.openings.clear();
        }
        self.pending = true;
        None
    }

    /// Records the opening after a tick and says whether the call stops there.
    pub fn after_tick(&mut self, opening_m: f64, ticks: u32, cap: u32, steps_left: u64) -> Option<GripperStop> {
        self.ticks_of_command = self.ticks_of_command.saturating_add(1);
        self.openings.push_back(opening_m);
        if self.openings.len() > SETTLE_WINDOW {
            self.openings.pop_front();
        }
        let stop = if self.is_settled() {
            Some(GripperStop::Settled)
        } else if steps_left == 0 {
            Some(GripperStop::Budget)
        } else {
            (ticks >= cap).then_some(GripperStop::StepCap)
        };
        if stop == Some(GripperStop::Settled) {
            self.pending = false;
        }
        stop
    }

    fn is_settled(&self) -> bool {
        if self.ticks_of_command < MIN_COMMAND_TICKS || self.openings.len() < SETTLE_WINDOW {
            return false;
        }
        let lo = self.openings.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = self.openings.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        hi - lo < SETTLE_EPSILON_M
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_command_with_nothing_pending_is_a_no_op() {
        let mut g = GripperState::settled(GripperCommand::Open);
        assert_eq!(g.begin(GripperCommand::Open), Some(GripperStop::NoOp));
        assert_eq!(g.begin(GripperCommand::Close), None);
    }

    #[test]
    fn settles_only_after_ten_ticks_and_a_still_opening() {
        let mut g = GripperState::settled(GripperCommand::Open);
        g.begin(GripperCommand::Close);
        for tick in 1..10 {
            assert_eq!(g.after_tick(0.01, tick, 30, 100), None, "tick {tick}");
        }
        assert_eq!(g.after_tick(0.0101, 10, 30, 100), Some(GripperStop::Settled));
        assert_eq!(g.begin(GripperCommand::Close), Some(GripperStop::NoOp));
    }

    #[test]
    fn history_carries_across_capped_calls() {
        let mut g = GripperState::settled(GripperCommand::Open);
        g.begin(GripperCommand::Close);
        for tick in 1..=5 {
            let stop = g.after_tick(0.05 - 0.005 * f64::from(tick), tick, 5, 100);
            assert_eq!(stop, if tick == 5 { Some(GripperStop::StepCap) } else { None });
        }
        assert_eq!(
            g.begin(GripperCommand::Close),
            None,
            "still pending after a capped call"
        );
        for tick in 1..=4 {
            assert_eq!(g.after_tick(0.02, tick, 30, 100), None);
        }
        assert_eq!(
            g.after_tick(0.02, 5, 30, 100),
            Some(GripperStop::Settled),
            "10 ticks in total"
        );
    }

    #[test]
    fn moving_opening_is_not_settled_and_budget_stops_it() {
        let mut g = GripperState::settled(GripperCommand::Close);
        g.begin(GripperCommand::Open);
        for tick in 1..=12 {
            let stop = g.after_tick(0.001 * f64::from(tick), tick, 30, if tick == 12 { 0 } else { 50 });
            assert_eq!(stop, if tick == 12 { Some(GripperStop::Budget) } else { None });
        }
    }
}
