//! Holds the arm when commands stop coming.

use std::time::{Duration, Instant};

use super::SafetyEvent;

/// What the watchdog asks of the control loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchdogAction {
    /// Commands are fresh (or the watchdog is not armed).
    Continue,
    /// No command for longer than the timeout: hold the measured position.
    Hold,
}

/// The watchdog's answer, with the event when it just started holding.
#[derive(Debug, Clone, PartialEq)]
pub struct WatchdogVerdict {
    /// What to do.
    pub action: WatchdogAction,
    /// Set on the check that started the hold.
    pub event: Option<SafetyEvent>,
}

/// The command watchdog: armed by the first [`Watchdog::feed`], it answers
/// [`WatchdogAction::Hold`] once more than `timeout` passed since the last command, until the
/// next command. Time is always passed in, so tests need no sleeps.
#[derive(Debug, Clone, PartialEq)]
pub struct Watchdog {
    timeout: Duration,
    last_command: Option<Instant>,
    holding: bool,
}

impl Watchdog {
    /// A disarmed watchdog.
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            last_command: None,
            holding: false,
        }
    }

    /// The timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A command arrived at `now` (arms the watchdog); returns an event when this ends a hold.
    pub fn feed(&mut self, now: Instant) -> Option<SafetyEvent> {
        self.last_command = Some(now);
        std::mem::replace(&mut self.holding, false).then_some(SafetyEvent::WatchdogResumed)
    }

    /// Stops watching (leaving `hil`); the next [`Watchdog::feed`] arms it again.
    pub fn disarm(&mut self) {
        self.last_command = None;
        self.holding = false;
    }

    /// Whether the watchdog is holding.
    pub fn is_holding(&self) -> bool {
        self.holding
    }

    /// Checks at `now`.
    pub fn check(&mut self, now: Instant) -> WatchdogVerdict {
        let Some(last) = self.last_command else {
            return WatchdogVerdict {
                action: WatchdogAction::Continue,
                event: None,
            };
        };
        let silent = now.saturating_duration_since(last);
        if silent <= self.timeout {
            return WatchdogVerdict {
                action: WatchdogAction::Continue,
                event: None,
            };
        }
        let started = !std::mem::replace(&mut self.holding, true);
        WatchdogVerdict {
            action: WatchdogAction::Hold,
            event: started.then(|| SafetyEvent::WatchdogHold {
                silent_ms: millis(silent),
                timeout_ms: millis(self.timeout),
            }),
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_millis(200);

    #[test]
    fn a_disarmed_watchdog_never_holds() {
        let t0 = Instant::now();
        let mut dog = Watchdog::new(TIMEOUT);
        assert_eq!(dog.check(t0 + Duration::from_secs(60)).action, WatchdogAction::Continue);
    }

    #[test]
    fn holds_once_the_timeout_passes_reports_once_and_resumes_on_the_next_command() {
        let t0 = Instant::now();
        let mut dog = Watchdog::new(TIMEOUT);
        assert_eq!(dog.feed(t0), None);
        let fresh = dog.check(t0 + TIMEOUT);
        assert_eq!(fresh.action, WatchdogAction::Continue);
        let first = dog.check(t0 + Duration::from_millis(250));
        assert_eq!(first.action, WatchdogAction::Hold);
        assert_eq!(
            first.event,
            Some(SafetyEvent::WatchdogHold {
                silent_ms: 250,
                timeout_ms: 200
            })
        );
        let again = dog.check(t0 + Duration::from_millis(400));
        assert_eq!(again.action, WatchdogAction::Hold);
        assert_eq!(again.event, None, "the hold is reported once");
        assert!(dog.is_holding());
        let t1 = t0 + Duration::from_millis(450);
        assert_eq!(dog.feed(t1), Some(SafetyEvent::WatchdogResumed));
        assert_eq!(
            dog.check(t1 + Duration::from_millis(100)).action,
            WatchdogAction::Continue
        );
    }

    #[test]
    fn disarming_stops_the_hold() {
        let t0 = Instant::now();
        let mut dog = Watchdog::new(TIMEOUT);
        dog.feed(t0);
        assert_eq!(dog.check(t0 + Duration::from_secs(1)).action, WatchdogAction::Hold);
        dog.disarm();
        assert!(!dog.is_holding());
        assert_eq!(dog.check(t0 + Duration::from_secs(2)).action, WatchdogAction::Continue);
    }
}
