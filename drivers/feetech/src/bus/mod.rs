//! Async bus: transactions with timeouts and retries over any byte transport.
//!
//! [`Bus`] runs over anything `AsyncRead + AsyncWrite + Unpin + Send` (a serial port from
//! [`open`], a pseudo-terminal, an in-memory duplex). Every transaction first drains stale
//! input, every read waits for its reply as long as [`Bus::reply_timeout`] says (the measured
//! round trips, [`BusConfig::timeout`] the least), and lost or corrupted replies are
//! retried [`BusConfig::retries`] more times. Servo error flags never fail an operation by
//! themselves: they come back in each [`Reply`], and [`Reply::checked`] turns them into
//! [`BusError::Servo`].

mod eeprom;
mod error;
mod link;
mod ops;
mod round_trip;
mod scan;
mod serial;

use std::time::Duration;

pub use eeprom::EepromWrite;
pub use error::BusError;
pub use round_trip::CEILING as MAX_REPLY_TIMEOUT;
pub use scan::{FoundServo, ScanEvent, ScanMethod, ScanOptions};
pub use serial::{BaudControl, open};

use crate::protocol::frame::FrameDecoder;
use crate::protocol::status::ServoError;
use round_trip::RoundTrips;

/// Timing and retry policy of a [`Bus`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BusConfig {
    /// The least one attempt waits for its reply (or for all replies of a SYNC_READ); it waits
    /// longer when the bus's measured round trips ask for it (see [`Bus::reply_timeout`]).
    pub timeout: Duration,
    /// Extra attempts after a lost or corrupted reply (SYNC_READ re-asks only the servos
    /// whose reply was lost or corrupted).
    pub retries: u32,
    /// The adapter echoes every transmitted byte back; skip that echo before the reply.
    pub echo: bool,
}

impl Default for BusConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_millis(50),
            retries: 2,
            echo: false,
        }
    }
}

/// A reply from one servo: the value plus the error flags of its status packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply<T> {
    /// Servo that answered.
    pub id: u8,
    /// Error flags of the status packet.
    pub error: ServoError,
    /// Decoded payload.
    pub value: T,
}

impl<T> Reply<T> {
    /// The value, or [`BusError::Servo`] when the servo reported any error flag.
    pub fn checked(self) -> Result<T, BusError> {
        if self.error.is_empty() {
            Ok(self.value)
        } else {
            Err(BusError::Servo {
                id: self.id,
                error: self.error,
            })
        }
    }

    /// Transforms the value, keeping id and flags.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Reply<U> {
        Reply {
            id: self.id,
            error: self.error,
            value: f(self.value),
        }
    }
}

/// Per-servo results of a SYNC_READ, in the order the ids were given.
pub type SyncReadResults<T> = Vec<Result<Reply<T>, BusError>>;

/// A half-duplex Feetech bus over the transport `T`.
#[derive(Debug)]
pub struct Bus<T> {
    port: T,
    config: BusConfig,
    decoder: FrameDecoder,
    /// Echo bytes still expected before the reply.
    echo_pending: Vec<u8>,
    /// The latest measured round trips.
    round_trips: RoundTrips,
}

impl<T> Bus<T> {
    /// Wraps a transport.
    pub fn new(port: T, config: BusConfig) -> Self {
        Self {
            port,
            config,
            decoder: FrameDecoder::new(),
            echo_pending: Vec::new(),
            round_trips: RoundTrips::default(),
        }
    }

    /// How long the next attempt waits for its reply: twice the 99th percentile of the latest
    /// 256 round trips (late replies included), at least [`BusConfig::timeout`], at most
    /// [`MAX_REPLY_TIMEOUT`].
    pub fn reply_timeout(&self) -> Duration {
        self.round_trips.timeout(self.config.timeout)
    }

    /// The current policy.
    pub fn config(&self) -> &BusConfig {
        &self.config
    }

    /// Replaces the policy.
    pub fn set_config(&mut self, config: BusConfig) {
        self.config = config;
    }

    /// The transport.
    pub fn get_ref(&self) -> &T {
        &self.port
    }

    /// The transport, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.port
    }

    /// Gives the transport back.
    pub fn into_inner(self) -> T {
        self.port
    }
}
