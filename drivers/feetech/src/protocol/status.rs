//! Status packets (servo to host) and the error flags they carry.

use super::frame::Frame;

bitflags::bitflags! {
    /// Error flags of a status packet's ERROR byte (same bits as the Status register, 65).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct ServoError: u8 {
        /// Input voltage outside the configured limits.
        const VOLTAGE = 0x01;
        /// Magnetic encoder (angle sensor) fault.
        const ANGLE_SENSOR = 0x02;
        /// Temperature above the limit.
        const OVERHEAT = 0x04;
        /// Current above the protection current.
        const OVERCURRENT = 0x08;
        /// Overload protection tripped.
        const OVERLOAD = 0x20;
    }
}

impl ServoError {
    /// Human-readable names of the set flags, e.g. `["OVERLOAD"]`; unknown bits appear as hex.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.iter_names().map(|(n, _)| n.to_owned()).collect();
        let unknown = self.bits() & !Self::all().bits();
        if unknown != 0 {
            names.push(format!("{unknown:#04x}"));
        }
        names
    }
}

impl std::fmt::Display for ServoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_empty() {
            return f.write_str("no error");
        }
        f.write_str(&self.names().join("|"))
    }
}

/// A decoded status packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusPacket {
    /// Id of the servo that answered.
    pub id: u8,
    /// Error flags it reported (unknown bits are kept).
    pub error: ServoError,
    /// Data bytes (empty for PING and WRITE acknowledgements).
    pub params: Vec<u8>,
}

impl StatusPacket {
    /// Builds a status packet.
    pub fn new(id: u8, error: ServoError, params: Vec<u8>) -> Self {
        Self { id, error, params }
    }

    /// Encodes this status as a frame (body = error byte).
    pub fn to_frame(&self) -> Frame {
        Frame::new(self.id, self.error.bits(), self.params.clone())
    }

    /// Interprets a decoded frame as a status packet.
    pub fn from_frame(frame: &Frame) -> Self {
        Self {
            id: frame.id,
            error: ServoError::from_bits_retain(frame.body),
            params: frame.params.clone(),
        }
    }
}

impl From<Frame> for StatusPacket {
    fn from(frame: Frame) -> Self {
        Self {
            id: frame.id,
            error: ServoError::from_bits_retain(frame.body),
            params: frame.params,
        }
    }
}
