//! How a lost port comes back: what reopens it and prepares its servos, and how often.

use std::time::Duration;

use fakesim_arm::BoxFuture;
use feetech::bus::{Bus, BusConfig};

/// Opens the arm's port again and prepares its servos as at start-up.
pub trait Reconnect<T>: Send {
    /// Opens the port at its path (the same device, or the adapter plugged in again).
    fn open(&mut self) -> BoxFuture<'_, Result<Bus<T>, String>>;

    /// Checks the servos on `bus` as at start-up (ids, models, the calibration they hold) and
    /// writes the configuration the daemon wrote at connect where it differs; refuses servos
    /// that differ from the arm that was connected.
    fn prepare<'a>(&'a mut self, bus: &'a mut Bus<T>) -> BoxFuture<'a, Result<(), String>>;
}

/// How a lost port is brought back, and a reset servo configured again.
pub struct Reconnection<T> {
    /// Opens and prepares the port.
    pub reconnect: Box<dyn Reconnect<T>>,
    /// Time between two attempts to reopen a lost port; `None`: a lost port stays lost.
    pub interval: Option<Duration>,
}

/// The bus policy the port task runs with: the given one, without the bus's own retries
/// (the task retries itself and counts every attempt).
pub(crate) fn operating_config(config: &BusConfig) -> BusConfig {
    BusConfig { retries: 0, ..*config }
}
