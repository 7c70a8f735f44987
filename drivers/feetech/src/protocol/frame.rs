//! Packet framing: `FF FF ID LEN BODY PARAMS.. CHK`.
//!
//! `LEN` counts the body byte, the parameters and the checksum (`params + 2`);
//! `CHK` is the bitwise NOT of the 8-bit sum of every byte from `ID` to the last parameter.

pub use super::decoder::{DecodeError, FrameDecoder};

/// The two header bytes that start every packet.
pub const HEADER: [u8; 2] = [0xFF, 0xFF];

/// Largest number of parameters a frame can carry (`LEN` is one byte and counts two more).
pub const MAX_PARAMS: usize = 253;

/// One packet on the wire, instruction or status.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Servo id (or [`super::BROADCAST_ID`]).
    pub id: u8,
    /// Instruction byte of an instruction packet, error byte of a status packet.
    pub body: u8,
    /// Parameter (or data) bytes.
    pub params: Vec<u8>,
}

/// Checksum of a frame: `!(id + len + body + sum(params))` with 8-bit wrapping arithmetic.
pub fn checksum(id: u8, len: u8, body: u8, params: &[u8]) -> u8 {
    let sum = params
        .iter()
        .fold(id.wrapping_add(len).wrapping_add(body), |acc, b| acc.wrapping_add(*b));
    !sum
}

impl Frame {
    /// Builds a frame from its parts.
    pub fn new(id: u8, body: u8, params: Vec<u8>) -> Self {
        Self { id, body, params }
    }

    /// Number of bytes this frame takes on the wire.
    pub fn wire_len(&self) -> usize {
        self.params.len() + 6
    }

    /// Encodes the frame into a new byte vector.
    ///
    /// Frames with more than [`MAX_PARAMS`] parameters cannot be represented; their
    /// parameters are truncated to that length.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.wire_len());
        self.encode_into(&mut out);
        out
    }

    /// Appends the encoded frame to `out` (see [`Frame::encode`]).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let params = self.params.get(..MAX_PARAMS).unwrap_or(&self.params);
        let len = u8::try_from(params.len() + 2).unwrap_or(u8::MAX);
        out.extend_from_slice(&HEADER);
        out.extend_from_slice(&[self.id, len, self.body]);
        out.extend_from_slice(params);
        out.push(checksum(self.id, len, self.body, params));
    }
}
