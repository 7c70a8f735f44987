//! The one place that decides what a lost bus does. The port task only keeps the facts (the
//! link's state and its monotonic loss and recovery counters, each servo's answers); the fault
//! reaction, the bridge's mode and the refusals ask this module what follows from them.
//!
//! The policy:
//! - **the port lost** (counted by the link's loss counter): torque off (an attempt: the bus
//!   may be gone), the stop latched, a journal line, and `hil` left for `mirror`; it never
//!   returns to `hil` by itself;
//! - **every servo silent on an open port** (a brown-out): torque off (an attempt), the stop
//!   latched naming the servos, a journal line; motion is refused by the stop;
//! - **the bus back** (the port's recovery counter rose: the port task verified the servos and
//!   switched their torque off; or servos answer again after all fell silent): torque off once
//!   more through the pipeline, a journal line; the mode stays `mirror` and the stop stays
//!   latched until a client resets it;
//! - **while the port is not connected**: motion, entering `hil` and resetting a stop the loss
//!   latched are refused, naming the port, where the link stands and its last error.
//!
//! Losses are counted, never sampled: a loss and a reconnection that both happen between two
//! looks still raise a loss and then a recovery, in that order.

use fakesim_arm::{ArmHealth, LinkState};

use super::SafetyEvent;

/// What became of the arm's bus since the policy last looked, oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkChange {
    /// The port was lost (once per outage, also an outage that already ended).
    Lost,
    /// An outage ended: the port is back with its servos verified and torque off, or servos
    /// answer again after all fell silent.
    Recovered,
}

/// What the policy found in one health snapshot.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BusVerdict {
    /// Changes since the last look, oldest first.
    pub changes: Vec<LinkChange>,
    /// The bus is not usable now (port not connected, or every servo silent): why.
    pub down: Option<String>,
    /// Events for the journal.
    pub events: Vec<SafetyEvent>,
    /// Every servo fell silent on an open port since the last look.
    pub fell_silent: bool,
}

impl BusVerdict {
    /// Whether the bus was lost since the last look (the port, or every servo): latch the stop.
    pub fn lost(&self) -> bool {
        self.fell_silent || self.changes.contains(&LinkChange::Lost)
    }
}

/// Follows the link's counters and the servos' silence.
#[derive(Debug, Clone, Default)]
pub struct BusLossPolicy {
    losses: u32,
    recoveries: u32,
    silent: bool,
}

impl BusLossPolicy {
    /// A policy that has seen no loss yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Looks at one health snapshot: every loss and recovery counted since the last look, and
    /// whether the bus is down now.
    pub fn observe(&mut self, health: &ArmHealth) -> BusVerdict {
        let mut verdict = BusVerdict {
            down: down_reason(health),
            ..BusVerdict::default()
        };
        let link = &health.link;
        let port_lost = link.losses > self.losses;
        let silent = every_servo_silent(health);
        let fell_silent = silent && !self.silent;
        if port_lost || fell_silent {
            let reason = verdict
                .down
                .clone()
                .unwrap_or_else(|| lost_reason(health.last_error.as_deref()));
            verdict.events.push(SafetyEvent::BusLost { reason });
        }
        if port_lost {
            verdict.changes.push(LinkChange::Lost);
        }
        verdict.fell_silent = fell_silent;
        let answers_again = self.silent && !silent && health.port_open();
        if link.recoveries > self.recoveries || answers_again {
            verdict.changes.push(LinkChange::Recovered);
        }
        self.losses = link.losses;
        self.recoveries = link.recoveries;
        self.silent = silent;
        verdict
    }
}

/// Every servo of a real arm stopped answering, on a port that is still open.
fn every_servo_silent(health: &ArmHealth) -> bool {
    health.port_open() && !health.servos.is_empty() && health.servos.iter().all(|s| !s.responding)
}

fn lost_reason(last_error: Option<&str>) -> String {
    format!("bus lost: {}", last_error.unwrap_or("no servo answers"))
}

/// Why the bus is not usable now (the port not connected, or every servo silent), if it is not.
fn down_reason(health: &ArmHealth) -> Option<String> {
    (!health.port_open() || every_servo_silent(health)).then(|| lost_reason(health.last_error.as_deref()))
}

/// The port is not connected: where its link stands and its last error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkDown {
    /// Where the link stands (`lost`, `reconnecting`, `verifying`).
    pub state: &'static str,
    /// The arm's last error.
    pub last_error: String,
}

/// Refuses what needs the arm's port while it is not connected (motion, entering `hil`,
/// resetting a stop the loss latched).
pub fn check_link(health: &ArmHealth) -> Result<(), LinkDown> {
    if health.link.state == LinkState::Connected {
        return Ok(());
    }
    Err(LinkDown {
        state: health.link.state.name(),
        last_error: health
            .last_error
            .clone()
            .unwrap_or_else(|| "no error reported".to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_arm::healthy;

    #[test]
    fn a_loss_and_a_recovery_between_two_looks_are_both_seen_in_order() {
        let mut policy = BusLossPolicy::new();
        let mut health = healthy();
        assert_eq!(policy.observe(&health), BusVerdict::default());
        // Lost and back while nobody looked: the state reads connected, as before.
        health.link.losses = 1;
        health.link.recoveries = 1;
        health.last_error = Some("port closed".into());
        let verdict = policy.observe(&health);
        assert_eq!(verdict.changes, [LinkChange::Lost, LinkChange::Recovered]);
        assert!(verdict.lost() && verdict.down.is_none());
        assert_eq!(
            verdict.events,
            [SafetyEvent::BusLost {
                reason: "bus lost: port closed".into()
            }]
        );
        assert_eq!(policy.observe(&health), BusVerdict::default(), "counted once");
    }

    #[test]
    fn a_lasting_outage_is_lost_once_and_down_until_it_ends() {
        let mut policy = BusLossPolicy::new();
        let mut health = healthy();
        health.link.state = LinkState::Lost;
        health.link.losses = 1;
        assert!(policy.observe(&health).lost());
        let lasting = policy.observe(&health);
        assert!(!lasting.lost() && lasting.events.is_empty());
        assert_eq!(lasting.down.as_deref(), Some("bus lost: no servo answers"));
        assert!(check_link(&health).is_err());
        health.link.state = LinkState::Connected;
        health.link.recoveries = 1;
        assert_eq!(policy.observe(&health).changes, [LinkChange::Recovered]);
        assert!(check_link(&health).is_ok());
        health.link.losses = 2;
        assert!(policy.observe(&health).lost(), "a new outage is a new loss");
    }

    #[test]
    fn every_servo_silent_on_an_open_port_is_a_loss_once() {
        let mut policy = BusLossPolicy::new();
        let mut health = healthy();
        health.servos[3].responding = false;
        assert!(
            !policy.observe(&health).lost(),
            "one silent servo is the fault policy's"
        );
        health.servos.iter_mut().for_each(|s| s.responding = false);
        let verdict = policy.observe(&health);
        assert!(verdict.lost() && verdict.down.is_some());
        assert!(
            verdict.changes.is_empty(),
            "the port itself was not lost: hil is kept, latched"
        );
        assert!(!policy.observe(&health).lost());
        assert!(check_link(&health).is_ok(), "the port itself is connected");
        health.servos[0].responding = true;
        assert_eq!(
            policy.observe(&health).changes,
            [LinkChange::Recovered],
            "a servo answers again"
        );
    }
}
