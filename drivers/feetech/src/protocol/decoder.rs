//! Streaming frame decoder that resynchronises on garbage and never panics.

use super::frame::{Frame, HEADER, checksum};

/// Why a candidate frame was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A complete frame arrived but its checksum byte is wrong; the decoder skipped it.
    #[error("bad checksum in frame from id {id}: expected {expected:#04x}, received {received:#04x}")]
    Checksum {
        /// The id byte of the rejected frame (may itself be corrupted).
        id: u8,
        /// Checksum computed over the received bytes.
        expected: u8,
        /// Checksum byte actually received.
        received: u8,
    },
}

/// Byte offsets inside an encoded frame.
const ID_AT: usize = 2;
const LEN_AT: usize = 3;
const BODY_AT: usize = 4;
const PARAMS_AT: usize = 5;
/// Header, id and length bytes that precede the `LEN` counted bytes.
const PREFIX: usize = 4;
/// Ids above this are never valid on the wire; `FF FF FF` means an extra header byte.
const INVALID_ID: u8 = 0xFF;

/// Outcome of examining the candidate frame at the start of the buffer.
enum Candidate {
    /// Not enough bytes yet.
    Incomplete,
    /// The bytes at the start cannot start a frame; drop one byte and rescan.
    Invalid,
    /// A complete frame of `total` bytes.
    Complete {
        total: usize,
        frame: Result<Frame, DecodeError>,
    },
}

/// Incremental decoder: feed bytes with [`FrameDecoder::push`], take frames with
/// [`FrameDecoder::next_frame`].
///
/// Garbage before a header is dropped, partial frames are kept until completed, frames with
/// a bad checksum are reported once and skipped. When a header announces a frame that has not
/// fully arrived but a complete valid frame already follows it, the first header is treated as
/// garbage so a corrupted length byte cannot stall the frames behind it.
#[derive(Debug, Default, Clone)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    start: usize,
    discarded: u64,
}

impl FrameDecoder {
    /// Creates an empty decoder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Drops every buffered byte (used before a new transaction).
    pub fn clear(&mut self) {
        self.discard(self.pending().len());
        self.buf.clear();
        self.start = 0;
    }

    /// Bytes received but not yet consumed as frames.
    pub fn pending(&self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or_default()
    }

    /// Total number of bytes dropped as garbage or as part of rejected frames so far.
    pub fn discarded(&self) -> u64 {
        self.discarded
    }

    /// Returns the next complete frame, a checksum error for a rejected frame, or `None`
    /// when more bytes are needed.
    pub fn next_frame(&mut self) -> Option<Result<Frame, DecodeError>> {
        loop {
            let pending = self.pending();
            let Some(at) = find_header(pending) else {
                // Keep a trailing 0xFF: it may be the first half of a header.
                let keep = usize::from(pending.last() == Some(&HEADER[0]));
                self.discard(pending.len() - keep);
                return None;
            };
            self.discard(at);
            match examine(self.pending()) {
                Candidate::Incomplete => {
                    let next = self.pending().get(1..).and_then(first_complete_frame);
                    match next {
                        Some(offset) => self.discard(offset + 1),
                        None => return None,
                    }
                }
                Candidate::Invalid => self.discard(1),
                Candidate::Complete { total, frame } => {
                    match frame {
                        Ok(_) => self.start += total,
                        // Skip one byte only: a real frame may start inside the rejected one.
                        Err(_) => self.discard(1),
                    }
                    return Some(frame);
                }
            }
        }
    }

    fn discard(&mut self, n: usize) {
        let n = n.min(self.pending().len());
        self.start += n;
        self.discarded += n as u64;
    }
}

/// Position of the first `FF FF` header in `bytes`.
fn find_header(bytes: &[u8]) -> Option<usize> {
    bytes.windows(2).position(|w| w == HEADER)
}

/// Offset of the first header in `bytes` that starts a complete frame with a valid checksum.
fn first_complete_frame(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(at) = bytes.get(from..).and_then(find_header) {
        let offset = from + at;
        let candidate = bytes.get(offset..).unwrap_or_default();
        if let Candidate::Complete { frame: Ok(_), .. } = examine(candidate) {
            return Some(offset);
        }
        from = offset + 1;
    }
    None
}

/// Examines the frame candidate at the start of `bytes` (which starts with a header).
fn examine(bytes: &[u8]) -> Candidate {
    let (Some(&id), Some(&len)) = (bytes.get(ID_AT), bytes.get(LEN_AT)) else {
        return Candidate::Incomplete;
    };
    if id == INVALID_ID || len < 2 {
        return Candidate::Invalid;
    }
    let total = PREFIX + usize::from(len);
    let Some(frame_bytes) = bytes.get(..total) else {
        return Candidate::Incomplete;
    };
    let (Some(&body), Some(params), Some(&received)) = (
        frame_bytes.get(BODY_AT),
        frame_bytes.get(PARAMS_AT..total - 1),
        frame_bytes.last(),
    ) else {
        return Candidate::Invalid;
    };
    let expected = checksum(id, len, body, params);
    let frame = if expected == received {
        Ok(Frame::new(id, body, params.to_vec()))
    } else {
        Err(DecodeError::Checksum { id, expected, received })
    };
    Candidate::Complete { total, frame }
}
