//! Counters of a teleop session and the rate it achieved.

use std::time::Duration;

use serde::Serialize;

use super::CycleOutcome;

/// What a teleop loop did so far. Every cycle counts in `cycles` and in exactly one of
/// `commanded`, `skipped`, `refused` and `errors`; `capped` counts the commanded cycles whose
/// goals the delta cap limited.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct TeleopStats {
    /// Cycles run.
    pub cycles: u64,
    /// Cycles that sent goals to the follower and the twin.
    pub commanded: u64,
    /// Commanded cycles limited by the delta cap.
    pub capped: u64,
    /// Cycles that sent nothing because a target was outside a range, or the fault policy
    /// held the follower or had its torque switched off.
    pub skipped: u64,
    /// Cycles refused by the emergency stop or the table guard (or an unusable target).
    pub refused: u64,
    /// Cycles that failed on an arm or the twin.
    pub errors: u64,
    /// Time from the start of the first cycle to the start of the latest one.
    pub elapsed: Duration,
    /// Duration of the latest cycle.
    pub last_cycle: Duration,
}

impl TeleopStats {
    /// Cycle starts per second over the session (0 before the second cycle).
    pub fn achieved_hz(&self) -> f64 {
        let seconds = self.elapsed.as_secs_f64();
        if self.cycles < 2 || seconds <= 0.0 {
            return 0.0;
        }
        // Precision loss only beyond 2^53 cycles.
        #[allow(clippy::cast_precision_loss)]
        let intervals = (self.cycles - 1) as f64;
        intervals / seconds
    }

    /// Counts one finished cycle.
    pub(super) fn record(&mut self, outcome: &CycleOutcome, elapsed: Duration, last_cycle: Duration) {
        self.cycles += 1;
        self.elapsed = elapsed;
        self.last_cycle = last_cycle;
        match outcome {
            CycleOutcome::Commanded { capped, .. } => {
                self.commanded += 1;
                self.capped += u64::from(*capped);
            }
            CycleOutcome::Skipped(_) => self.skipped += 1,
            CycleOutcome::Refused(_) => self.refused += 1,
            CycleOutcome::Failed(_) => self.errors += 1,
        }
    }
}

impl std::fmt::Display for TeleopStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:.1} cycles/s, {} cycles: {} commanded ({} capped), {} skipped, {} refused, {} errors",
            self.achieved_hz(),
            self.cycles,
            self.commanded,
            self.capped,
            self.skipped,
            self.refused,
            self.errors
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::teleop::{SkipReason, TeleopError};
    use fakesim_safety::{FaultAction, SafetyError};

    #[test]
    fn every_cycle_counts_once_and_the_rate_spans_the_cycle_starts() {
        let mut stats = TeleopStats::default();
        assert_eq!(stats.achieved_hz(), 0.0);
        let tick = Duration::from_millis(10);
        let outcomes = [
            CycleOutcome::Commanded {
                goals: [0.0; 6],
                capped: false,
            },
            CycleOutcome::Commanded {
                goals: [0.0; 6],
                capped: true,
            },
            CycleOutcome::Skipped(SkipReason::Fault(FaultAction::Hold)),
            CycleOutcome::Refused(SafetyError::Kinematics("no model".into())),
            CycleOutcome::Failed(TeleopError::InvalidRate(0.0)),
        ];
        for (n, outcome) in (0_u32..).zip(&outcomes) {
            stats.record(outcome, tick * n, Duration::from_millis(3));
        }
        assert_eq!(
            (
                stats.cycles,
                stats.commanded,
                stats.capped,
                stats.skipped,
                stats.refused,
                stats.errors
            ),
            (5, 2, 1, 1, 1, 1)
        );
        // Five cycle starts 10 ms apart: four periods in 40 ms.
        assert!((stats.achieved_hz() - 100.0).abs() < 1e-9);
        assert_eq!(
            stats.to_string(),
            "100.0 cycles/s, 5 cycles: 2 commanded (1 capped), 1 skipped, 1 refused, 1 errors"
        );
    }
}
