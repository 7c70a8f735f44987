//! An episode's step budget: the agent tools' contract (the daemon's `--max-steps`), another
//! budget a client asks for at reset, or none, so a recorder never loses an episode to it.

use crate::error::EpisodeError;

/// How many control ticks an episode may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// At most this many ticks.
    Ticks(u64),
    /// No budget: the episode runs until it is stopped.
    Unlimited,
}

impl Budget {
    /// The budget a reset asks for: unset is `default` (the daemon's `--max-steps`), 0 is
    /// none, N is N ticks.
    pub fn asked(asked: Option<u64>, default: u64) -> Self {
        match asked.unwrap_or(default) {
            0 => Budget::Unlimited,
            ticks => Budget::Ticks(ticks),
        }
    }

    /// Ticks left after `step` ticks (`u64::MAX` without a budget).
    pub fn left(self, step: u64) -> u64 {
        match self {
            Budget::Ticks(max) => max.saturating_sub(step),
            Budget::Unlimited => u64::MAX,
        }
    }

    /// Ticks left after `step`, or the refusal `step_limit` when none are.
    pub fn check(self, step: u64) -> Result<u64, EpisodeError> {
        match (self, self.left(step)) {
            (Budget::Ticks(max_steps), 0) => Err(EpisodeError::StepLimit { max_steps }),
            (_, left) => Ok(left),
        }
    }

    /// Whether `step` ticks use the budget up.
    pub fn used_up(self, step: u64) -> bool {
        self.left(step) == 0
    }

    /// The budget as the API reports it: its ticks, 0 for none.
    pub fn max_steps(self) -> u64 {
        match self {
            Budget::Ticks(max) => max,
            Budget::Unlimited => 0,
        }
    }

    /// The budget as the journal and the summary write it: its ticks, or null for none.
    pub fn ticks(self) -> Option<u64> {
        match self {
            Budget::Ticks(max) => Some(max),
            Budget::Unlimited => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_is_the_default_zero_is_none_and_none_never_refuses() {
        assert_eq!(Budget::asked(None, 300), Budget::Ticks(300));
        assert_eq!(Budget::asked(Some(5), 300), Budget::Ticks(5));
        let none = Budget::asked(Some(0), 300);
        assert_eq!((none, none.max_steps(), none.ticks()), (Budget::Unlimited, 0, None));
        assert_eq!(none.check(1_000_000).ok(), Some(u64::MAX));
        assert!(!none.used_up(u64::MAX - 1));
        let five = Budget::Ticks(5);
        assert_eq!(five.check(4).ok(), Some(1));
        assert!(matches!(five.check(5), Err(EpisodeError::StepLimit { max_steps: 5 })));
        assert!(five.used_up(7) && !five.used_up(4));
    }
}
