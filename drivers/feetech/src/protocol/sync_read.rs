//! Collecting the per-servo status packets that answer a SYNC_READ, in any order.

use super::decoder::{DecodeError, FrameDecoder};
use super::frame::Frame;
use super::status::StatusPacket;

/// Why one servo's part of a SYNC_READ reply is missing or unusable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncReadError {
    /// Nothing usable arrived from this servo.
    #[error("no reply")]
    NoReply,
    /// A frame that looked like it came from this servo had a bad checksum.
    #[error("corrupted reply (bad checksum)")]
    Checksum,
    /// The reply carried the wrong number of data bytes.
    #[error("reply has {got} data bytes, expected {expected}")]
    BadLength {
        /// Bytes requested per servo.
        expected: u8,
        /// Bytes received.
        got: usize,
    },
}

/// What [`SyncReadCollector`] did with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepted {
    /// The frame filled the slot of a requested servo.
    Stored,
    /// The frame came from a servo that was not asked, or that already answered.
    Unexpected,
}

/// Per-servo outcome, in the order the ids were requested.
pub type SyncReadSlots = Vec<(u8, Result<StatusPacket, SyncReadError>)>;

/// Accumulates the replies to one SYNC_READ; order of arrival does not matter and
/// missing or broken replies leave the other servos' results intact.
#[derive(Debug, Clone)]
pub struct SyncReadCollector {
    len: u8,
    slots: Vec<(u8, Option<Result<StatusPacket, SyncReadError>>)>,
}

impl SyncReadCollector {
    /// Expects `len` data bytes from each of `ids`.
    pub fn new(len: u8, ids: &[u8]) -> Self {
        Self {
            len,
            slots: ids.iter().map(|id| (*id, None)).collect(),
        }
    }

    /// Offers a decoded frame.
    pub fn accept(&mut self, frame: Frame) -> Accepted {
        let expected = self.len;
        let Some(slot) = self.open_slot(frame.id) else {
            return Accepted::Unexpected;
        };
        let status = StatusPacket::from(frame);
        *slot = Some(if status.params.len() == usize::from(expected) {
            Ok(status)
        } else {
            Err(SyncReadError::BadLength {
                expected,
                got: status.params.len(),
            })
        });
        Accepted::Stored
    }

    /// Records a decode error; a bad checksum is attributed to the id it carries when that
    /// servo has not answered yet (a later valid reply still replaces it).
    pub fn reject(&mut self, error: &DecodeError) {
        let DecodeError::Checksum { id, .. } = error;
        if let Some(slot) = self.open_slot(*id) {
            *slot = Some(Err(SyncReadError::Checksum));
        }
    }

    /// Whether every requested servo has delivered a usable reply.
    pub fn is_complete(&self) -> bool {
        self.slots.iter().all(|(_, r)| matches!(r, Some(Ok(_))))
    }

    /// Ids still lacking a usable reply, in request order.
    pub fn missing(&self) -> Vec<u8> {
        self.slots
            .iter()
            .filter(|(_, r)| !matches!(r, Some(Ok(_))))
            .map(|(id, _)| *id)
            .collect()
    }

    /// Per-servo results in request order; servos that never answered get
    /// [`SyncReadError::NoReply`].
    pub fn finish(self) -> SyncReadSlots {
        self.slots
            .into_iter()
            .map(|(id, r)| (id, r.unwrap_or(Err(SyncReadError::NoReply))))
            .collect()
    }

    /// The first slot for `id` that has no usable reply yet.
    fn open_slot(&mut self, id: u8) -> Option<&mut Option<Result<StatusPacket, SyncReadError>>> {
        self.slots
            .iter_mut()
            .find(|(slot_id, r)| *slot_id == id && !matches!(r, Some(Ok(_))))
            .map(|(_, r)| r)
    }
}

/// Parses a complete SYNC_READ reply buffer (any order, garbage tolerated).
pub fn parse_sync_read_reply(bytes: &[u8], len: u8, ids: &[u8]) -> SyncReadSlots {
    let mut decoder = FrameDecoder::new();
    decoder.push(bytes);
    let mut collector = SyncReadCollector::new(len, ids);
    while let Some(decoded) = decoder.next_frame() {
        match decoded {
            Ok(frame) => {
                collector.accept(frame);
            }
            Err(error) => collector.reject(&error),
        }
    }
    collector.finish()
}
