//! Instruction packets (host to servo): codes, typed builders and parsing.

use super::BROADCAST_ID;
use super::frame::Frame;

/// Instruction codes understood by STS/SMS servos.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Instruction {
    /// Query the servo; it answers with its error flags.
    Ping = 0x01,
    /// Read `len` bytes from `addr`.
    Read = 0x02,
    /// Write bytes at `addr`.
    Write = 0x03,
    /// Buffered write, executed on [`Instruction::Action`].
    RegWrite = 0x04,
    /// Execute buffered REG_WRITEs.
    Action = 0x05,
    /// Factory reset of the control table ("recovery").
    Reset = 0x06,
    /// Read the same range from several servos; each answers in turn.
    SyncRead = 0x82,
    /// Write the same range on several servos in one broadcast packet.
    SyncWrite = 0x83,
}

/// An instruction byte that is not a known instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown instruction {0:#04x}")]
pub struct UnknownInstruction(pub u8);

impl TryFrom<u8> for Instruction {
    type Error = UnknownInstruction;

    fn try_from(byte: u8) -> Result<Self, Self::Error> {
        Ok(match byte {
            0x01 => Self::Ping,
            0x02 => Self::Read,
            0x03 => Self::Write,
            0x04 => Self::RegWrite,
            0x05 => Self::Action,
            0x06 => Self::Reset,
            0x82 => Self::SyncRead,
            0x83 => Self::SyncWrite,
            other => return Err(UnknownInstruction(other)),
        })
    }
}

impl From<Instruction> for u8 {
    fn from(instruction: Instruction) -> Self {
        instruction as u8
    }
}

/// An instruction packet addressed to one servo or broadcast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionPacket {
    /// Target id, or [`BROADCAST_ID`].
    pub id: u8,
    /// What the servo should do.
    pub request: Request,
}

impl InstructionPacket {
    /// Whether the addressed servo(s) send a status packet back (assuming the default
    /// response level). SYNC_READ is broadcast yet every listed servo replies.
    pub fn expects_reply(&self) -> bool {
        match self.request {
            Request::SyncRead { .. } => true,
            Request::SyncWrite { .. } => false,
            Request::Ping => true,
            _ => self.id != BROADCAST_ID,
        }
    }

    /// Encodes the packet as a frame.
    pub fn to_frame(&self) -> Frame {
        self.request.to_frame(self.id)
    }

    /// Parses an instruction frame.
    pub fn from_frame(frame: &Frame) -> Result<Self, ParseError> {
        Ok(Self {
            id: frame.id,
            request: Request::parse(frame)?,
        })
    }
}

/// The decoded content of an instruction packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// PING.
    Ping,
    /// READ `len` bytes at `addr`.
    Read {
        /// Start address.
        addr: u8,
        /// Number of bytes.
        len: u8,
    },
    /// WRITE `data` at `addr`.
    Write {
        /// Start address.
        addr: u8,
        /// Bytes to write.
        data: Vec<u8>,
    },
    /// REG_WRITE (buffered) of `data` at `addr`.
    RegWrite {
        /// Start address.
        addr: u8,
        /// Bytes to write on ACTION.
        data: Vec<u8>,
    },
    /// ACTION.
    Action,
    /// Factory reset (RECOVERY, 0x06).
    Reset,
    /// SYNC_READ of `len` bytes at `addr` from each of `ids`.
    SyncRead {
        /// Start address.
        addr: u8,
        /// Bytes per servo.
        len: u8,
        /// Servos that must answer, in order.
        ids: Vec<u8>,
    },
    /// SYNC_WRITE of `len` bytes at `addr` to each servo.
    SyncWrite {
        /// Start address.
        addr: u8,
        /// Bytes per servo.
        len: u8,
        /// `(id, data)` pairs; each `data` has exactly `len` bytes.
        entries: Vec<(u8, Vec<u8>)>,
    },
}

/// Why an instruction frame could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The instruction byte is unknown.
    #[error(transparent)]
    UnknownInstruction(#[from] UnknownInstruction),
    /// The parameters do not match the layout of the instruction.
    #[error("malformed {instruction:?} parameters ({len} bytes)")]
    BadParams {
        /// The instruction being parsed.
        instruction: Instruction,
        /// Number of parameter bytes received.
        len: usize,
    },
}

impl Request {
    /// The instruction code of this request.
    pub fn instruction(&self) -> Instruction {
        match self {
            Self::Ping => Instruction::Ping,
            Self::Read { .. } => Instruction::Read,
            Self::Write { .. } => Instruction::Write,
            Self::RegWrite { .. } => Instruction::RegWrite,
            Self::Action => Instruction::Action,
            Self::Reset => Instruction::Reset,
            Self::SyncRead { .. } => Instruction::SyncRead,
            Self::SyncWrite { .. } => Instruction::SyncWrite,
        }
    }

    /// The parameter bytes of this request.
    pub fn params(&self) -> Vec<u8> {
        match self {
            Self::Ping | Self::Action | Self::Reset => Vec::new(),
            Self::Read { addr, len } => vec![*addr, *len],
            Self::Write { addr, data } | Self::RegWrite { addr, data } => {
                let mut params = Vec::with_capacity(data.len() + 1);
                params.push(*addr);
                params.extend_from_slice(data);
                params
            }
            Self::SyncRead { addr, len, ids } => {
                let mut params = Vec::with_capacity(ids.len() + 2);
                params.extend_from_slice(&[*addr, *len]);
                params.extend_from_slice(ids);
                params
            }
            Self::SyncWrite { addr, len, entries } => {
                let mut params = Vec::with_capacity(2 + entries.len() * (usize::from(*len) + 1));
                params.extend_from_slice(&[*addr, *len]);
                for (id, data) in entries {
                    params.push(*id);
                    params.extend_from_slice(data);
                }
                params
            }
        }
    }

    /// Builds the frame carrying this request to `id`.
    pub fn to_frame(&self, id: u8) -> Frame {
        Frame::new(id, self.instruction().into(), self.params())
    }

    /// Parses the request carried by an instruction frame.
    pub fn parse(frame: &Frame) -> Result<Self, ParseError> {
        let instruction = Instruction::try_from(frame.body)?;
        let params = frame.params.as_slice();
        let bad = || ParseError::BadParams {
            instruction,
            len: params.len(),
        };
        let request = match (instruction, params) {
            (Instruction::Ping, []) => Self::Ping,
            (Instruction::Action, []) => Self::Action,
            (Instruction::Reset, []) => Self::Reset,
            (Instruction::Read, [addr, len]) => Self::Read { addr: *addr, len: *len },
            (Instruction::Write, [addr, data @ ..]) if !data.is_empty() => Self::Write {
                addr: *addr,
                data: data.to_vec(),
            },
            (Instruction::RegWrite, [addr, data @ ..]) if !data.is_empty() => Self::RegWrite {
                addr: *addr,
                data: data.to_vec(),
            },
            (Instruction::SyncRead, [addr, len, ids @ ..]) => Self::SyncRead {
                addr: *addr,
                len: *len,
                ids: ids.to_vec(),
            },
            (Instruction::SyncWrite, [addr, len, rest @ ..]) => {
                let stride = usize::from(*len) + 1;
                if *len == 0 || rest.len() % stride != 0 {
                    return Err(bad());
                }
                let entries = rest
                    .chunks_exact(stride)
                    .filter_map(|chunk| chunk.split_first())
                    .map(|(id, data)| (*id, data.to_vec()))
                    .collect();
                Self::SyncWrite {
                    addr: *addr,
                    len: *len,
                    entries,
                }
            }
            _ => return Err(bad()),
        };
        Ok(request)
    }
}

/// PING `id`.
pub fn ping(id: u8) -> Frame {
    Request::Ping.to_frame(id)
}

/// READ `len` bytes at `addr` from `id`.
pub fn read(id: u8, addr: u8, len: u8) -> Frame {
    Request::Read { addr, len }.to_frame(id)
}

/// WRITE `data` at `addr` on `id`.
pub fn write(id: u8, addr: u8, data: &[u8]) -> Frame {
    Request::Write {
        addr,
        data: data.to_vec(),
    }
    .to_frame(id)
}

/// REG_WRITE (buffered until ACTION) `data` at `addr` on `id`.
pub fn reg_write(id: u8, addr: u8, data: &[u8]) -> Frame {
    Request::RegWrite {
        addr,
        data: data.to_vec(),
    }
    .to_frame(id)
}

/// ACTION on `id` (usually [`BROADCAST_ID`]).
pub fn action(id: u8) -> Frame {
    Request::Action.to_frame(id)
}

/// Factory reset of the control table of `id` (erases id, baud rate and calibration).
pub fn factory_reset(id: u8) -> Frame {
    Request::Reset.to_frame(id)
}

/// SYNC_READ `len` bytes at `addr` from each of `ids` (broadcast).
pub fn sync_read(addr: u8, len: u8, ids: &[u8]) -> Frame {
    Request::SyncRead {
        addr,
        len,
        ids: ids.to_vec(),
    }
    .to_frame(BROADCAST_ID)
}

/// SYNC_WRITE `len` bytes at `addr` on several servos (broadcast). Each entry's data is
/// truncated or zero-padded to exactly `len` bytes so the packet stays well formed.
pub fn sync_write<D: AsRef<[u8]>>(addr: u8, len: u8, entries: &[(u8, D)]) -> Frame {
    let entries = entries
        .iter()
        .map(|(id, data)| {
            let mut data = data.as_ref().to_vec();
            data.resize(usize::from(len), 0);
            (*id, data)
        })
        .collect();
    Request::SyncWrite { addr, len, entries }.to_frame(BROADCAST_ID)
}
