//! Errors of bus operations.

use crate::control_table::ValueOutOfRange;
use crate::protocol::status::ServoError;

/// Everything that can go wrong talking to servos.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    /// Nothing came back from the servo before the timeout.
    #[error("no reply from servo {id}")]
    NoReply {
        /// Servo addressed.
        id: u8,
    },
    /// Part of a reply arrived, the rest did not before the timeout.
    #[error("timed out in the middle of a reply from servo {id} ({received} bytes received)")]
    Timeout {
        /// Servo addressed.
        id: u8,
        /// Bytes of the unfinished reply.
        received: usize,
    },
    /// A reply arrived with a bad checksum.
    #[error("corrupted reply from servo {id} (bad checksum)")]
    Checksum {
        /// Id carried by the corrupted frame.
        id: u8,
    },
    /// The servo answered with error flags set (see [`super::Reply::checked`]).
    #[error("servo {id} reported {error}")]
    Servo {
        /// Servo that answered.
        id: u8,
        /// Flags it reported.
        error: ServoError,
    },
    /// A reply carried the wrong number of data bytes.
    #[error("reply from servo {id} has {got} data bytes, expected {expected}")]
    BadLength {
        /// Servo that answered.
        id: u8,
        /// Bytes requested.
        expected: usize,
        /// Bytes received.
        got: usize,
    },
    /// The packet would exceed the protocol's 253 parameter bytes.
    #[error("packet too long: {params} parameter bytes (at most 253)")]
    PacketTooLong {
        /// Parameter bytes requested.
        params: usize,
    },
    /// The adapter is configured to echo but sent back something else.
    #[error("adapter echo did not match the transmitted bytes")]
    EchoMismatch,
    /// The serial port failed or disappeared.
    #[error("serial port gone: {0}")]
    PortGone(#[source] std::io::Error),
    /// A value does not fit its register.
    #[error(transparent)]
    Value(#[from] ValueOutOfRange),
    /// The register cannot be written.
    #[error("register {register} is read-only")]
    ReadOnly {
        /// Register name.
        register: &'static str,
    },
    /// The id cannot be used for this operation (broadcast or out of range).
    #[error("id {0} cannot be used here")]
    InvalidId(u8),
    /// Another servo already answers at the requested id.
    #[error("id {0} is already taken by another servo")]
    IdTaken(u8),
    /// The servo does not support this baud rate.
    #[error("baud rate {0} is not supported by the servo")]
    UnsupportedBaud(u32),
    /// An operation that needs a single servo on the bus found a different number.
    #[error("expected exactly one servo on the bus, found {found}")]
    NotAlone {
        /// Servos found.
        found: usize,
    },
    /// A written value did not read back.
    #[error("servo {id}: wrote {register} = {written} but it reads back {read}")]
    VerifyFailed {
        /// Servo written.
        id: u8,
        /// Register name.
        register: &'static str,
        /// Value written.
        written: i32,
        /// Value read back.
        read: i32,
    },
}

impl BusError {
    /// Whether retrying the same transaction may succeed (lost or corrupted traffic).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::NoReply { .. }
                | Self::Timeout { .. }
                | Self::Checksum { .. }
                | Self::BadLength { .. }
                | Self::EchoMismatch
        )
    }
}
