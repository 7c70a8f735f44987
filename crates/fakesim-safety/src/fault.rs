//! Turns servo error flags and bus health into hold / torque-off / latch decisions.

use std::collections::{BTreeMap, BTreeSet};

use feetech::protocol::status::ServoError;
use serde::Serialize;

use super::SafetyEvent;
use crate::bus_loss::{BusLossPolicy, LinkChange};
use fakesim_arm::{ArmHealth, ServoHealth};

/// What the control loop must do, from least to most drastic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultAction {
    /// Nothing wrong.
    Continue,
    /// Keep torque, send no new targets: hold the measured position.
    Hold,
    /// Switch torque off and send nothing more.
    TorqueOff,
}

/// The policy's decision for one health snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultDecision {
    /// The most drastic action any condition asks for.
    pub action: FaultAction,
    /// Latch the emergency stop: a condition that latches (the bus or a servo lost, a servo
    /// reset) appeared with this snapshot. Only a reset resumes; a lasting condition latches once.
    pub latch: bool,
    /// Every condition found, for messages and the latch reason.
    pub reasons: Vec<String>,
    /// Conditions that appeared, changed or cleared since the previous evaluation.
    pub events: Vec<SafetyEvent>,
    /// What became of the bus since the previous evaluation (see [`crate::bus_loss`]).
    pub link: Vec<LinkChange>,
}

/// The fault policy:
/// - overload, overheat, overcurrent or angle-sensor flags: torque off;
/// - voltage flag (and unknown bits): hold;
/// - a servo that reset its RAM: hold, and latch;
/// - a servo lost after its retries: torque off (an attempt: the servo may not hear it) and
///   latch; a servo lost right after an overload is reported as locked up;
/// - the bus lost: as [`crate::bus_loss`] decides (torque off and latch, once per loss).
///
/// Actions follow the current snapshot; events and latches are edge-triggered, so a condition
/// that lasts is journalled and latched once (a reset of the stop is not undone by it).
#[derive(Debug, Clone, Default)]
pub struct FaultPolicy {
    flags_seen: BTreeMap<u8, ServoError>,
    lost_seen: BTreeSet<u8>,
    resets_seen: BTreeMap<u8, u32>,
    bus: BusLossPolicy,
}

impl FaultPolicy {
    /// A policy that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The action a servo's error flags call for.
    pub fn action_for(flags: ServoError) -> FaultAction {
        let torque_off =
            ServoError::OVERLOAD | ServoError::OVERHEAT | ServoError::OVERCURRENT | ServoError::ANGLE_SENSOR;
        if flags.intersects(torque_off) {
            FaultAction::TorqueOff
        } else if flags.is_empty() {
            FaultAction::Continue
        } else {
            FaultAction::Hold
        }
    }

    /// Decides on one health snapshot.
    pub fn evaluate(&mut self, health: &ArmHealth) -> FaultDecision {
        let mut decision = FaultDecision {
            action: FaultAction::Continue,
            latch: false,
            reasons: Vec::new(),
            events: Vec::new(),
            link: Vec::new(),
        };
        self.bus(health, &mut decision);
        for servo in &health.servos {
            self.lost(servo, &mut decision);
            self.flags(servo, &mut decision);
            self.reset(servo, &mut decision);
        }
        decision
    }

    fn reset(&mut self, servo: &ServoHealth, decision: &mut FaultDecision) {
        let before = self.resets_seen.insert(servo.id, servo.resets).unwrap_or(0);
        if servo.resets <= before {
            return;
        }
        decision.action = decision.action.max(FaultAction::Hold);
        decision.latch = true;
        decision.reasons.push(format!(
            "servo_reset: {} (servo {}) reset its RAM; it was configured again with torque off: reset the stop, \
             then SetMode(hil) to switch torque back on",
            servo.joint, servo.id
        ));
        decision.events.push(SafetyEvent::ServoReset {
            joint: servo.joint,
            id: servo.id,
            detail: servo.last_error.clone(),
        });
    }

    fn bus(&mut self, health: &ArmHealth, decision: &mut FaultDecision) {
        let verdict = self.bus.observe(health);
        if verdict.lost() {
            decision.action = FaultAction::TorqueOff;
            decision.latch = true;
            decision
                .reasons
                .extend(verdict.events.iter().filter_map(|event| match event {
                    SafetyEvent::BusLost { reason } if verdict.down.is_none() => Some(reason.clone()),
                    _ => None,
                }));
        }
        if let Some(down) = verdict.down {
            decision.action = FaultAction::TorqueOff;
            decision.reasons.push(down);
        }
        // A port back has its servos' torque switched off once more, through the pipeline.
        if verdict.changes.contains(&LinkChange::Recovered) {
            decision.action = FaultAction::TorqueOff;
        }
        decision.events.extend(verdict.events);
        decision.link = verdict.changes;
    }

    fn lost(&mut self, servo: &ServoHealth, decision: &mut FaultDecision) {
        if servo.responding {
            self.lost_seen.remove(&servo.id);
            return;
        }
        decision.action = FaultAction::TorqueOff;
        let locked_up = servo.error_flags.contains(ServoError::OVERLOAD);
        decision.reasons.push(if locked_up {
            locked_up_message(servo)
        } else {
            format!(
                "{} (servo {}) lost after {} failed transactions",
                servo.joint, servo.id, servo.comm.consecutive_failures
            )
        });
        if !self.lost_seen.insert(servo.id) {
            return;
        }
        decision.latch = true;
        decision.events.push(if locked_up {
            SafetyEvent::ServoLockedUp {
                joint: servo.joint,
                id: servo.id,
                message: locked_up_message(servo),
            }
        } else {
            SafetyEvent::ServoLost {
                joint: servo.joint,
                id: servo.id,
                consecutive_failures: servo.comm.consecutive_failures,
                last_error: servo.last_error.clone(),
            }
        });
    }

    fn flags(&mut self, servo: &ServoHealth, decision: &mut FaultDecision) {
        let flags = servo.error_flags;
        let action = Self::action_for(flags);
        decision.action = decision.action.max(action);
        if !flags.is_empty() {
            decision
                .reasons
                .push(format!("{} (servo {}) reports {flags}", servo.joint, servo.id));
        }
        let before = self.flags_seen.insert(servo.id, flags).unwrap_or_default();
        if before == flags {
            return;
        }
        decision.events.push(if flags.is_empty() {
            SafetyEvent::ServoFaultCleared {
                joint: servo.joint,
                id: servo.id,
            }
        } else {
            SafetyEvent::ServoFault {
                joint: servo.joint,
                id: servo.id,
                flags: flags.names(),
                action,
            }
        });
    }
}

/// What a person reads about a servo that stopped answering after an overload.
fn locked_up_message(servo: &ServoHealth) -> String {
    format!(
        "{} (servo {}) stopped answering after an overload: the servo has locked up and answers again only \
         after a power cycle. Free the joint, switch the arm's supply off and on, then reset the stop",
        servo.joint, servo.id
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_arm::healthy;
    use fakesim_arm::Joint;

    #[test]
    fn each_flag_maps_to_its_action() {
        assert_eq!(FaultPolicy::action_for(ServoError::empty()), FaultAction::Continue);
        assert_eq!(FaultPolicy::action_for(ServoError::VOLTAGE), FaultAction::Hold);
        for flag in [
            ServoError::OVERLOAD,
            ServoError::OVERHEAT,
            ServoError::OVERCURRENT,
            ServoError::ANGLE_SENSOR,
        ] {
            assert_eq!(FaultPolicy::action_for(flag), FaultAction::TorqueOff, "{flag}");
            assert_eq!(
                FaultPolicy::action_for(flag | ServoError::VOLTAGE),
                FaultAction::TorqueOff
            );
        }
        assert_eq!(
            FaultPolicy::action_for(ServoError::from_bits_retain(0x40)),
            FaultAction::Hold
        );
    }

    #[test]
    fn a_healthy_arm_continues_silently() {
        let decision = FaultPolicy::new().evaluate(&healthy());
        assert_eq!(decision.action, FaultAction::Continue);
        assert!(!decision.latch && decision.reasons.is_empty() && decision.events.is_empty());
    }

    #[test]
    fn overload_turns_torque_off_without_latching_and_is_journalled_once() {
        let mut policy = FaultPolicy::new();
        let mut health = healthy();
        health.servos[1].error_flags = ServoError::OVERLOAD;
        let first = policy.evaluate(&health);
        assert_eq!(first.action, FaultAction::TorqueOff);
        assert!(!first.latch);
        assert_eq!(first.reasons, ["shoulder_lift (servo 2) reports OVERLOAD"]);
        assert_eq!(
            first.events,
            [SafetyEvent::ServoFault {
                joint: Joint::ShoulderLift,
                id: 2,
                flags: vec!["OVERLOAD".into()],
                action: FaultAction::TorqueOff
            }]
        );
        let second = policy.evaluate(&health);
        assert_eq!(second.action, FaultAction::TorqueOff);
        assert!(second.events.is_empty());
        health.servos[1].error_flags = ServoError::empty();
        let cleared = policy.evaluate(&health);
        assert_eq!(cleared.action, FaultAction::Continue);
        assert_eq!(
            cleared.events,
            [SafetyEvent::ServoFaultCleared {
                joint: Joint::ShoulderLift,
                id: 2
            }]
        );
    }

    #[test]
    fn voltage_holds_and_the_worst_flag_wins() {
        let mut policy = FaultPolicy::new();
        let mut health = healthy();
        health.servos[0].error_flags = ServoError::VOLTAGE;
        assert_eq!(policy.evaluate(&health).action, FaultAction::Hold);
        health.servos[5].error_flags = ServoError::OVERHEAT;
        let decision = policy.evaluate(&health);
        assert_eq!(decision.action, FaultAction::TorqueOff);
        assert_eq!(decision.events.len(), 1, "only the gripper's flags are new");
    }

    #[test]
    fn a_lost_servo_turns_torque_off_and_latches() {
        let mut policy = FaultPolicy::new();
        let mut health = healthy();
        let elbow = &mut health.servos[2];
        elbow.responding = false;
        elbow.comm.consecutive_failures = 3;
        elbow.last_error = Some("no reply from servo 3".into());
        let decision = policy.evaluate(&health);
        assert_eq!(decision.action, FaultAction::TorqueOff);
        assert!(decision.latch);
        assert_eq!(
            decision.reasons,
            ["elbow_flex (servo 3) lost after 3 failed transactions"]
        );
        assert!(matches!(
            decision.events.as_slice(),
            [SafetyEvent::ServoLost {
                joint: Joint::ElbowFlex,
                id: 3,
                ..
            }]
        ));
        assert!(policy.evaluate(&health).events.is_empty());
    }

    #[test]
    fn a_lost_port_turns_torque_off_and_latches() {
        let mut policy = FaultPolicy::new();
        let mut health = healthy();
        health.link.state = fakesim_arm::LinkState::Lost;
        health.link.losses = 1;
        health.last_error = Some("serial port gone: port closed".into());
        let decision = policy.evaluate(&health);
        assert_eq!(decision.action, FaultAction::TorqueOff);
        assert!(decision.latch);
        assert_eq!(
            decision.events,
            [SafetyEvent::BusLost {
                reason: "bus lost: serial port gone: port closed".into()
            }]
        );
        assert!(policy.evaluate(&health).events.is_empty());
    }

    #[test]
    fn a_lasting_loss_latches_once_so_a_reset_of_the_stop_holds() {
        let mut policy = FaultPolicy::new();
        let mut health = healthy();
        health.link.state = fakesim_arm::LinkState::Lost;
        health.link.losses = 1;
        assert!(policy.evaluate(&health).latch);
        let lasting = policy.evaluate(&health);
        assert!(!lasting.latch, "the same loss does not latch again");
        assert_eq!(lasting.action, FaultAction::TorqueOff);
        health.link.state = fakesim_arm::LinkState::Connected;
        health.link.recoveries = 1;
        assert!(!policy.evaluate(&health).latch);
        health.link.state = fakesim_arm::LinkState::Lost;
        health.link.losses = 2;
        assert!(policy.evaluate(&health).latch, "a new loss latches again");
    }

    #[test]
    fn a_servo_silent_after_an_overload_is_reported_locked_up() {
        let mut policy = FaultPolicy::new();
        let mut health = healthy();
        health.servos[1].error_flags = ServoError::OVERLOAD;
        policy.evaluate(&health);
        health.servos[1].responding = false;
        let decision = policy.evaluate(&health);
        assert!(decision.latch);
        match decision.events.as_slice() {
            [SafetyEvent::ServoLockedUp { joint, id, message }] => {
                assert_eq!((*joint, *id), (Joint::ShoulderLift, 2));
                assert!(message.contains("power cycle"), "{message}");
            }
            other => panic!("expected a lock-up, got {other:?}"),
        }
    }

    #[test]
    fn a_servo_reset_holds_and_latches_once() {
        let mut policy = FaultPolicy::new();
        let mut health = healthy();
        health.servos[3].resets = 1;
        let decision = policy.evaluate(&health);
        assert_eq!(decision.action, FaultAction::Hold);
        assert!(decision.latch);
        assert!(
            decision.reasons[0].starts_with("servo_reset: wrist_flex (servo 4)"),
            "{:?}",
            decision.reasons
        );
        assert!(matches!(
            decision.events.as_slice(),
            [SafetyEvent::ServoReset {
                joint: Joint::WristFlex,
                id: 4,
                ..
            }]
        ));
        let again = policy.evaluate(&health);
        assert!(!again.latch && again.events.is_empty() && again.action == FaultAction::Continue);
    }
}
