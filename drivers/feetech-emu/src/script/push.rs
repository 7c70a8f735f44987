//! A hand pushing one joint over a time window: it moves the shaft a given number of steps off
//! where it stood when the push began and holds it there, stronger than the servo, until the
//! window ends; a servo with torque on strains against it towards its goal.

use std::time::Duration;

/// One push of a hand against a joint.
#[derive(Debug, Clone, PartialEq)]
pub struct Push {
    /// Servo id of the joint.
    pub id: u8,
    /// Signed steps the hand moves the shaft off where it stood at the start.
    pub steps: f64,
    /// Start, as bus time (since the bus started).
    pub from: Duration,
    /// End, as bus time; the hand lets go then.
    pub until: Duration,
}

/// A push and where the shaft stood when it began.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Pushing {
    push: Push,
    anchor: Option<f64>,
}

impl Pushing {
    /// A push not begun yet.
    pub(crate) fn new(push: Push) -> Self {
        Self { push, anchor: None }
    }

    /// The servo pushed.
    pub(crate) fn id(&self) -> u8 {
        self.push.id
    }

    /// Where the hand holds the shaft at bus time `now` given its present position (noted as
    /// the start the first time the window is open); `None` outside the window.
    pub(crate) fn hold(&mut self, now: Duration, present: f64) -> Option<f64> {
        if now < self.push.from || now >= self.push.until {
            return None;
        }
        let anchor = *self.anchor.get_or_insert(present);
        Some(anchor + self.push.steps)
    }

    /// Whether the window has closed by `now`.
    pub(crate) fn is_over(&self, now: Duration) -> bool {
        now >= self.push.until
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_push_holds_the_shaft_off_its_start_inside_its_window_only() {
        let s = Duration::from_secs;
        let mut pushing = Pushing::new(Push {
            id: 3,
            steps: -100.0,
            from: s(2),
            until: s(4),
        });
        assert_eq!(pushing.hold(s(1), 2000.0), None);
        assert_eq!(pushing.hold(s(2), 2000.0), Some(1900.0));
        // The start is where the shaft stood when the push began, not where it is now.
        assert_eq!(pushing.hold(s(3), 1900.0), Some(1900.0));
        assert!(!pushing.is_over(s(3)));
        assert_eq!(pushing.hold(s(4), 1900.0), None);
        assert!(pushing.is_over(s(4)));
    }
}
