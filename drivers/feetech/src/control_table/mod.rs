//! The STS3215 control table as data: registers, value encoding, baud rates, model numbers.

mod baud;
mod registers;
mod sign_magnitude;
mod state;

pub use baud::{BAUD_RATES, DEFAULT_BAUD_RATE, baud_index, baud_rate};
pub use registers::*;
pub use sign_magnitude::{decode_sign_magnitude, encode_sign_magnitude};
pub use state::{STATE_BLOCK, STATE_BLOCK_ADDRESS, STATE_BLOCK_LEN, ServoState};

/// Whether the host may write a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Read only.
    Read,
    /// Read and write.
    ReadWrite,
}

/// Where a register lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Area {
    /// Persistent; writes stick only while `Lock` is 0.
    Eeprom,
    /// Volatile; reset at power-on.
    Ram,
}

/// One register of the control table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Register {
    /// LeRobot's name for the register (e.g. `Present_Position`).
    pub name: &'static str,
    /// Start address.
    pub address: u8,
    /// Size in bytes (1 or 2), little-endian.
    pub size: u8,
    /// Read only or read/write.
    pub access: Access,
    /// EEPROM or RAM.
    pub area: Area,
    /// Bit holding the sign in sign-magnitude registers; `None` for unsigned ones.
    pub sign_bit: Option<u8>,
}

/// A value that does not fit a register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("value {value} does not fit register {register} (allowed {min}..={max})")]
pub struct ValueOutOfRange {
    /// Register name.
    pub register: &'static str,
    /// Rejected value.
    pub value: i32,
    /// Smallest representable value.
    pub min: i32,
    /// Largest representable value.
    pub max: i32,
}

impl Register {
    /// Smallest value the register can hold.
    pub fn min_value(&self) -> i32 {
        match self.sign_bit {
            Some(_) => -self.max_value(),
            None => 0,
        }
    }

    /// Largest value the register can hold.
    pub fn max_value(&self) -> i32 {
        let bits = self.sign_bit.map_or(u32::from(self.size) * 8, u32::from).min(31);
        (1_i32 << bits) - 1
    }

    /// Decodes the register from its little-endian bytes (missing bytes count as 0).
    pub fn decode(&self, bytes: &[u8]) -> i32 {
        let raw = (0..usize::from(self.size)).fold(0_u32, |acc, i| {
            let byte = bytes.get(i).copied().unwrap_or(0);
            acc | (u32::from(byte) << (8 * i))
        });
        match self.sign_bit {
            Some(bit) => decode_sign_magnitude(raw, bit),
            None => i32::try_from(raw).unwrap_or(i32::MAX),
        }
    }

    /// Encodes `value` as little-endian bytes, or fails when it does not fit.
    pub fn try_encode(&self, value: i32) -> Result<Vec<u8>, ValueOutOfRange> {
        let out_of_range = ValueOutOfRange {
            register: self.name,
            value,
            min: self.min_value(),
            max: self.max_value(),
        };
        if value < out_of_range.min || value > out_of_range.max {
            return Err(out_of_range);
        }
        let raw = match self.sign_bit {
            Some(bit) => encode_sign_magnitude(value, bit).ok_or(out_of_range)?,
            None => value.unsigned_abs(),
        };
        Ok(raw.to_le_bytes().into_iter().take(usize::from(self.size)).collect())
    }

    /// Encodes `value`, first clamping it to the register's range.
    pub fn encode(&self, value: i32) -> Vec<u8> {
        let clamped = value.clamp(self.min_value(), self.max_value());
        self.try_encode(clamped).unwrap_or_default()
    }

    /// Whether `address` falls inside this register.
    pub fn contains(&self, address: u8) -> bool {
        address >= self.address && u16::from(address) < u16::from(self.address) + u16::from(self.size)
    }
}

/// The register starting at `address`, if any.
pub fn by_address(address: u8) -> Option<&'static Register> {
    ALL.iter().find(|r| r.address == address)
}

/// The register called `name` (LeRobot spelling, case-insensitive), if any.
pub fn by_name(name: &str) -> Option<&'static Register> {
    ALL.iter().find(|r| r.name.eq_ignore_ascii_case(name))
}

/// Model number reported by an STS3215 at `MODEL_NUMBER`.
pub const STS3215_MODEL_NUMBER: u16 = 777;

/// Known Feetech model numbers and their names.
pub const MODELS: &[(u16, &str)] = &[
    (STS3215_MODEL_NUMBER, "sts3215"),
    (2825, "sts3250"),
    (1284, "scs0009"),
    (11272, "sm8512bl"),
];

/// The name of a model number, if known.
pub fn model_name(model_number: u16) -> Option<&'static str> {
    MODELS.iter().find(|(n, _)| *n == model_number).map(|(_, name)| *name)
}

/// Steps per full turn of an STS3215 (12-bit magnetic encoder).
pub const STEPS_PER_TURN: i32 = 4096;

/// Writing this value to `TORQUE_ENABLE` makes the servo's current position read 2048.
pub const TORQUE_ENABLE_RECENTRE: i32 = 128;

/// Bit of `PHASE` that selects multi-turn angle feedback (cleared = single turn 0..4095).
pub const PHASE_MULTI_TURN_BIT: u8 = 0x10;
