//! The hardware status snapshot (`GetHardwareStatus`), as plain structs.

use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use fakesim_arm::Joint;
use fakesim_arm::{ArmHealth, CommCounters, LinkHealth, ServoHealth, ServoReading, Torque};
use fakesim_safety::{EstopLatch, SafetyEvent};

/// Everything `GetHardwareStatus` reports.
#[derive(Debug, Clone, PartialEq)]
pub struct HardwareStatus {
    /// The mode (`sim`, `mirror`, `hil`, ...), as the mode manager names it.
    pub mode: String,
    /// The arm's port (`None` without a real arm).
    pub port: Option<String>,
    /// The port works and at least one servo answers.
    pub bus_connected: bool,
    /// The link to the bus (`None` without a real arm).
    pub link: Option<LinkHealth>,
    /// The arm's torque as its servos confirmed it (see [`fakesim_arm::Torque::of_servos`]).
    pub torque: Torque,
    /// One entry per servo, action-key order; empty without a real arm.
    pub servos: Vec<ServoStatus>,
    /// The emergency stop.
    pub estop: EstopStatus,
    /// The most recent safety events, oldest first.
    pub recent_events: Vec<TimedEvent>,
    /// The arm's most recent error.
    pub last_error: Option<String>,
}

/// One servo in the status.
#[derive(Debug, Clone, PartialEq)]
pub struct ServoStatus {
    /// Servo id.
    pub id: u8,
    /// The joint (its label is the LeRobot motor name).
    pub joint: Joint,
    /// Whether it answers (see [`ServoHealth::responding`]).
    pub responding: bool,
    /// Position in the twin's radians, from its latest reading.
    pub position_rad: Option<f64>,
    /// Its latest reading: steps, degrees, temperature, voltage, load, current, flags, moving.
    pub reading: Option<ServoReading>,
    /// Error flag names of its latest reply, e.g. `["OVERLOAD"]`.
    pub error_flags: Vec<String>,
    /// The latest goal sent (steps).
    pub goal_steps: Option<i32>,
    /// Torque as the servo last confirmed it; `None` before any torque write was answered,
    /// and after a lost bus until it confirms torque again.
    pub torque_enabled: Option<bool>,
    /// RAM resets found since the arm was opened.
    pub resets: u32,
    /// Communication counters.
    pub comm: CommCounters,
    /// Its latest communication error.
    pub last_error: Option<String>,
}

/// The emergency stop in the status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EstopStatus {
    /// Whether it is latched.
    pub latched: bool,
    /// Why.
    pub reason: Option<String>,
}

/// A safety event with the wall-clock time it was recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimedEvent {
    /// Milliseconds since the Unix epoch.
    pub unix_ms: u64,
    /// The event (flattened: `{"unix_ms":..,"event":"estop_latched",..}`).
    #[serde(flatten)]
    pub event: SafetyEvent,
}

/// The last `capacity` safety events, for the status (the journal keeps them all).
#[derive(Debug, Clone, PartialEq)]
pub struct RecentEvents {
    capacity: usize,
    events: VecDeque<TimedEvent>,
}

impl RecentEvents {
    /// Keeps at most `capacity` events (at least one).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            capacity,
            events: VecDeque::with_capacity(capacity),
        }
    }

    /// Records an event that happened at `at`, dropping the oldest beyond the capacity.
    pub fn push(&mut self, at: SystemTime, event: SafetyEvent) {
        if self.events.len() == self.capacity {
            self.events.pop_front();
        }
        let unix_ms = at
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.events.push_back(TimedEvent { unix_ms, event });
    }

    /// The events, oldest first.
    pub fn to_vec(&self) -> Vec<TimedEvent> {
        self.events.iter().cloned().collect()
    }

    /// How many are kept now.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

impl HardwareStatus {
    /// Assembles the status from the arm's health, the latch and the recent events.
    pub fn snapshot(
        mode: &str,
        port: Option<&str>,
        health: &ArmHealth,
        estop: &EstopLatch,
        events: &RecentEvents,
    ) -> Self {
        let reason = estop.reason();
        Self {
            mode: mode.to_owned(),
            port: port.map(str::to_owned),
            bus_connected: !health.bus_lost(),
            link: port.map(|_| health.link),
            torque: health.torque,
            servos: health.servos.iter().map(ServoStatus::from).collect(),
            estop: EstopStatus {
                latched: reason.is_some(),
                reason,
            },
            recent_events: events.to_vec(),
            last_error: health.last_error.clone(),
        }
    }
}

impl From<&ServoHealth> for ServoStatus {
    fn from(servo: &ServoHealth) -> Self {
        Self {
            id: servo.id,
            joint: servo.joint,
            responding: servo.responding,
            position_rad: servo.last_reading.map(|r| r.position_rad),
            reading: servo.last_reading.and_then(|r| r.servo),
            error_flags: servo.error_flags.names(),
            goal_steps: servo.goal_steps,
            torque_enabled: servo.torque_enabled,
            resets: servo.resets,
            comm: servo.comm,
            last_error: servo.last_error.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use feetech::protocol::status::ServoError;

    use super::*;
    use fakesim_arm::JointState;

    fn health() -> ArmHealth {
        let mut servos: Vec<ServoHealth> = Joint::ALL
            .iter()
            .map(|j| ServoHealth::new(*j, j.default_servo_id()))
            .collect();
        let reading = ServoReading {
            id: 3,
            steps: 2100,
            degrees: 4.66,
            normalized: 4.66,
            temperature_c: 31.0,
            voltage_v: 12.1,
            load_percent: -2.5,
            current_ma: 13.0,
            error_flags: ServoError::OVERHEAT,
            moving: true,
        };
        servos[2].last_reading = Some(JointState {
            position_rad: 0.0813,
            servo: Some(reading),
        });
        servos[2].error_flags = ServoError::OVERHEAT;
        servos[2].comm.timeouts = 4;
        servos[2].goal_steps = Some(2110);
        servos[4].responding = false;
        ArmHealth {
            link: LinkHealth::connected(),
            torque: fakesim_arm::Torque::On,
            servos,
            last_error: Some("no reply from servo 5".into()),
        }
    }

    #[test]
    fn the_snapshot_carries_every_servo_the_latch_and_the_events() {
        let latch = EstopLatch::new();
        let mut events = RecentEvents::new(8);
        let at = UNIX_EPOCH + Duration::from_millis(1_700_000_000_123);
        events.push(at, latch.trip("operator"));
        let status = HardwareStatus::snapshot("hil", Some("/dev/ttyUSB0"), &health(), &latch, &events);
        assert_eq!(status.mode, "hil");
        assert_eq!(status.port.as_deref(), Some("/dev/ttyUSB0"));
        assert!(status.bus_connected);
        assert_eq!(
            status.estop,
            EstopStatus {
                latched: true,
                reason: Some("operator".into())
            }
        );
        assert_eq!(status.servos.len(), 6);
        let elbow = &status.servos[2];
        assert_eq!((elbow.id, elbow.joint), (3, Joint::ElbowFlex));
        assert_eq!(elbow.position_rad, Some(0.0813));
        assert_eq!(elbow.reading.unwrap().temperature_c, 31.0);
        assert_eq!(elbow.error_flags, ["OVERHEAT"]);
        assert_eq!(elbow.comm.timeouts, 4);
        assert_eq!(elbow.goal_steps, Some(2110));
        assert!(!status.servos[4].responding);
        assert_eq!(status.servos[0].position_rad, None);
        let json = serde_json::to_string(&status.recent_events[0]).unwrap();
        assert_eq!(
            json,
            r#"{"unix_ms":1700000000123,"event":"estop_latched","reason":"operator"}"#
        );
    }

    #[test]
    fn recent_events_keep_only_the_newest() {
        let mut events = RecentEvents::new(2);
        assert!(events.is_empty());
        for ms in [1, 2, 3] {
            events.push(UNIX_EPOCH + Duration::from_millis(ms), SafetyEvent::WatchdogResumed);
        }
        let kept: Vec<u64> = events.to_vec().iter().map(|e| e.unix_ms).collect();
        assert_eq!(kept, [2, 3]);
        assert_eq!(events.len(), 2);
    }
}
