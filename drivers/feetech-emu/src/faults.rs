//! Fault injection settings, switchable at run time through the bus handle.

use std::collections::{BTreeMap, BTreeSet};

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
    /// Error bits forced on a servo: shown in its Status register and in every reply.
    pub forced_errors: BTreeMap<u8, ServoError>,
    /// Send every received byte straight back, as adapters that echo transmissions do.
    pub echo: bool,
}

impl FaultConfig {
    /// No fault at all.
    pub fn none() -> Self {
        Self::default()
    }

    /// Error bits forced on servo `id` (empty when none).
    pub fn forced(&self, id: u8) -> ServoError {
        self.forced_errors.get(&id).copied().unwrap_or_default()
    }

    /// Whether servo `id` has stopped answering.
    pub fn is_silent(&self, id: u8) -> bool {
        self.silent.contains(&id)
    }
}
