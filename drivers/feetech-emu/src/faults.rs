//! Fault injection settings, switchable at run time through the bus handle.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use feetech::protocol::status::ServoError;

/// Faults the virtual bus injects. The default injects none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultConfig {
    /// Probability (0..=1) that a reply packet is sent with a wrong checksum.
    pub corrupt_checksum: f64,
    /// Probability (0..=1) that a reply packet is not sent at all.
    pub drop_reply: f64,
    /// Servos that stopped answering: they neither execute instructions nor reply.
    pub silent: BTreeSet<u8>,
    /// Servos silent only during a time window (since the bus started), as in a brown-out.
    pub silences: Vec<SilenceWindow>,
    /// Error bits forced on a servo: shown in its Status register and in every reply.
    pub forced_errors: BTreeMap<u8, ServoError>,
    /// Error bits a servo reports only during a time window (since the bus started).
    pub windows: Vec<FaultWindow>,
    /// Send every received byte straight back, as adapters that echo transmissions do.
    pub echo: bool,
    /// Servos that lock up once they have an overload (forced or in a window): from then on
    /// they neither execute instructions nor reply, until their power is cycled.
    pub lockup_after_overload: BTreeSet<u8>,
}

/// Error bits that start and clear at given times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultWindow {
    /// Servo id.
    pub id: u8,
    /// Bits reported while the window is open.
    pub error: ServoError,
    /// When the fault starts, since the bus started.
    pub from: Duration,
    /// When it clears; `None` never.
    pub until: Option<Duration>,
}

/// A servo that neither executes instructions nor replies from one time to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SilenceWindow {
    /// Servo id.
    pub id: u8,
    /// When it falls silent, since the bus started.
    pub from: Duration,
    /// When it answers again; `None` never.
    pub until: Option<Duration>,
}

impl FaultWindow {
    /// Whether the fault is present at `at`.
    pub fn is_active(&self, at: Duration) -> bool {
        at >= self.from && self.until.is_none_or(|until| at < until)
    }
}

impl FaultConfig {
    /// No fault at all.
    pub fn none() -> Self {
        Self::default()
    }

    /// Error bits forced on servo `id` at time `at` since the bus started (empty when none).
    pub fn forced(&self, id: u8, at: Duration) -> ServoError {
        let always = self.forced_errors.get(&id).copied().unwrap_or_default();
        self.windows
            .iter()
            .filter(|window| window.id == id && window.is_active(at))
            .fold(always, |bits, window| bits | window.error)
    }

    /// Whether servo `id` locks up from an overload it has at some time in `from..=to`.
    pub fn locks_up(&self, id: u8, from: Duration, to: Duration) -> bool {
        if !self.lockup_after_overload.contains(&id) {
            return false;
        }
        let always = self
            .forced_errors
            .get(&id)
            .is_some_and(|error| error.contains(ServoError::OVERLOAD));
        always
            || self.windows.iter().any(|window| {
                window.id == id
                    && window.error.contains(ServoError::OVERLOAD)
                    && window.from <= to
                    && window.until.is_none_or(|until| until > from)
            })
    }

    /// Whether servo `id` has stopped answering.
    pub fn is_silent(&self, id: u8) -> bool {
        self.silent.contains(&id)
    }

    /// Whether servo `id` is silent at `at` since the bus started: for good, or in a window.
    pub fn is_silent_at(&self, id: u8, at: Duration) -> bool {
        self.is_silent(id)
            || self
                .silences
                .iter()
                .any(|window| window.id == id && at >= window.from && window.until.is_none_or(|until| at < until))
    }
}
