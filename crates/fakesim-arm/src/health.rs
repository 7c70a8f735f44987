//! Arm health: communication counters per servo, error flags, whether the bus is there.

use std::time::{Duration, Instant};

use feetech::protocol::status::ServoError;

use crate::{Joint, JointState};

/// How one attempt to reach a servo failed, as the counters tell failures apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptFailure {
    /// No (complete) reply in time.
    Timeout,
    /// A corrupted reply (bad checksum or length, or an echo that does not match).
    Corrupt,
    /// Anything else (counted only as the latest error).
    Other,
}

/// Where the link to the arm's bus stands: connected, or lost and on its way back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    /// The port is open and the servos were verified on it.
    Connected,
    /// The port failed; nothing is sent, and torque is not known.
    Lost,
    /// The port is being opened again.
    Reconnecting,
    /// The port opened again; the servos are checked as at start-up.
    Verifying,
}

impl LinkState {
    /// The name status and the journal use.
    pub fn name(self) -> &'static str {
        match self {
            LinkState::Connected => "connected",
            LinkState::Lost => "lost",
            LinkState::Reconnecting => "reconnecting",
            LinkState::Verifying => "verifying",
        }
    }
}

/// The link's lifecycle: its state and what outages it went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkHealth {
    /// Where it stands now.
    pub state: LinkState,
    /// Attempts to reopen the port since the current outage began (0 while connected).
    pub attempts: u32,
    /// Outages since the arm was opened.
    pub losses: u32,
    /// Outages that ended with the servos verified again.
    pub recoveries: u32,
    /// When the current outage began (`None` while connected).
    pub lost_since: Option<Instant>,
    /// Time spent in outages that ended.
    pub time_lost: Duration,
}

impl LinkHealth {
    /// A link that is up and has never failed.
    pub fn connected() -> Self {
        Self {
            state: LinkState::Connected,
            attempts: 0,
            losses: 0,
            recoveries: 0,
            lost_since: None,
            time_lost: Duration::ZERO,
        }
    }

    /// Time lost in outages, the current one up to `now` included.
    pub fn time_lost_at(&self, now: Instant) -> Duration {
        self.time_lost
            + self
                .lost_since
                .map_or(Duration::ZERO, |since| now.saturating_duration_since(since))
    }
}

/// Torque as known: confirmed on, confirmed off, on some servos and off on the others, or not
/// known (a write a servo did not answer, a lost link, before the first write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Torque {
    /// Confirmed on (every servo, for an arm).
    On,
    /// Confirmed off (every servo, for an arm).
    Off,
    /// An arm whose servos confirmed on for some and off for the others.
    Mixed,
    /// Not known for a servo (or, for an arm, for at least one of its servos).
    Unknown,
}

impl Torque {
    /// A servo's torque from what it last confirmed (`None`: not known).
    pub fn confirmed(enabled: Option<bool>) -> Self {
        match enabled {
            Some(true) => Torque::On,
            Some(false) => Torque::Off,
            None => Torque::Unknown,
        }
    }

    /// The arm's torque from its servos': the one place the arm-level value is computed.
    /// Unknown as soon as one servo's is; an arm without servos is off.
    pub fn of_servos(servos: &[ServoHealth]) -> Self {
        servos
            .iter()
            .map(|servo| Torque::confirmed(servo.torque_enabled))
            .reduce(|arm, servo| match (arm, servo) {
                (Torque::Unknown, _) | (_, Torque::Unknown) => Torque::Unknown,
                (a, b) if a == b => a,
                _ => Torque::Mixed,
            })
            .unwrap_or(Torque::Off)
    }

    /// The name status, telemetry and the journal use.
    pub fn name(self) -> &'static str {
        match self {
            Torque::On => "on",
            Torque::Off => "off",
            Torque::Mixed => "mixed",
            Torque::Unknown => "unknown",
        }
    }

    /// Whether torque is confirmed on (every servo, for an arm).
    pub fn is_on(self) -> bool {
        self == Torque::On
    }
}

/// A snapshot of an arm's health.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmHealth {
    /// The link to the bus.
    pub link: LinkHealth,
    /// The arm's torque: for a real arm, [`Torque::of_servos`] of its servos (servos power up
    /// with it off; after a lost link it is unknown until they confirm it again).
    pub torque: Torque,
    /// One entry per servo in action-key order; empty for the twin.
    pub servos: Vec<ServoHealth>,
    /// The most recent error, for status displays.
    pub last_error: Option<String>,
}

impl ArmHealth {
    /// Health of an arm without servos (the twin).
    pub fn no_servos(torque: Torque) -> Self {
        Self {
            link: LinkHealth::connected(),
            torque,
            servos: Vec::new(),
            last_error: None,
        }
    }

    /// The port is open, with its servos verified.
    pub fn port_open(&self) -> bool {
        self.link.state == LinkState::Connected
    }

    /// The bus counts as lost: the port failed, or no servo answers any more.
    pub fn bus_lost(&self) -> bool {
        !self.port_open() || (!self.servos.is_empty() && self.servos.iter().all(|s| !s.responding))
    }

    /// Servos that stopped answering (see [`ServoHealth::responding`]).
    pub fn lost_servos(&self) -> impl Iterator<Item = &ServoHealth> {
        self.servos.iter().filter(|s| !s.responding)
    }
}

/// One servo's health.
#[derive(Debug, Clone, PartialEq)]
pub struct ServoHealth {
    /// The joint it drives.
    pub joint: Joint,
    /// Its id.
    pub id: u8,
    /// Communication counters.
    pub comm: CommCounters,
    /// False once `lost_after` transactions in a row failed after all their retries; true
    /// again after the next success.
    pub responding: bool,
    /// Error flags of its latest reply.
    pub error_flags: ServoError,
    /// Its latest error.
    pub last_error: Option<String>,
    /// Its latest successful reading.
    pub last_reading: Option<JointState>,
    /// The latest goal sent to it (steps).
    pub goal_steps: Option<i32>,
    /// Torque as the servo last confirmed it (by answering a torque write); `None` before any,
    /// and after the link was lost, until the servo confirms it again.
    pub torque_enabled: Option<bool>,
    /// Times the servo was found to have reset its RAM (torque, lock or configuration lost).
    pub resets: u32,
}

impl ServoHealth {
    /// A servo not heard from yet.
    pub fn new(joint: Joint, id: u8) -> Self {
        Self {
            joint,
            id,
            comm: CommCounters::default(),
            responding: true,
            error_flags: ServoError::empty(),
            last_error: None,
            last_reading: None,
            goal_steps: None,
            torque_enabled: None,
            resets: 0,
        }
    }

    /// Counts one failed attempt (before any retry), of a kind, with the backend's message.
    pub fn attempt_failed(&mut self, kind: AttemptFailure, message: String) {
        match kind {
            AttemptFailure::Timeout => self.comm.timeouts += 1,
            AttemptFailure::Corrupt => self.comm.corrupt += 1,
            AttemptFailure::Other => {}
        }
        self.last_error = Some(message);
    }

    /// Counts one retry.
    pub fn retried(&mut self) {
        self.comm.retries += 1;
    }

    /// Ends a transaction (all its attempts): updates the failure streak and `responding`.
    pub fn transaction_done(&mut self, ok: bool, lost_after: u32) {
        self.comm.transactions += 1;
        if ok {
            self.comm.consecutive_failures = 0;
        } else {
            self.comm.failures += 1;
            self.comm.consecutive_failures = self.comm.consecutive_failures.saturating_add(1);
        }
        self.responding = self.comm.consecutive_failures < lost_after.max(1);
    }
}

/// Communication counters of one servo since the arm was opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommCounters {
    /// Transactions (each with its retries) addressed to the servo.
    pub transactions: u64,
    /// Attempts that got no (complete) reply in time.
    pub timeouts: u64,
    /// Attempts that got a corrupted reply (bad checksum or length).
    pub corrupt: u64,
    /// Attempts repeated after a timeout or a corrupted reply.
    pub retries: u64,
    /// Transactions that failed after all retries.
    pub failures: u64,
    /// Transactions failed in a row, up to now.
    pub consecutive_failures: u32,
}
