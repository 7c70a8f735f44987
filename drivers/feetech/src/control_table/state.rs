//! The contiguous state block, Present_Position (56) through Present_Current (69..70).

use super::{
    MOVING, PRESENT_CURRENT, PRESENT_LOAD, PRESENT_POSITION, PRESENT_TEMPERATURE, PRESENT_VELOCITY, PRESENT_VOLTAGE,
    Register, STATUS,
};
use crate::protocol::status::ServoError;

/// First address of the state block (`PRESENT_POSITION`).
pub const STATE_BLOCK_ADDRESS: u8 = PRESENT_POSITION.address;

/// Length of the state block in bytes (addresses 56..=70).
pub const STATE_BLOCK_LEN: u8 = PRESENT_CURRENT.address + PRESENT_CURRENT.size - STATE_BLOCK_ADDRESS;

/// The registers decoded from the state block.
pub const STATE_BLOCK: &[Register] = &[
    PRESENT_POSITION,
    PRESENT_VELOCITY,
    PRESENT_LOAD,
    PRESENT_VOLTAGE,
    PRESENT_TEMPERATURE,
    STATUS,
    MOVING,
    PRESENT_CURRENT,
];

/// One servo's state as read from the state block, in raw register units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServoState {
    /// Present position in steps.
    pub position: i32,
    /// Present speed, 50 steps/s per unit.
    pub velocity: i32,
    /// Present load, 0.1 % of PWM duty.
    pub load: i32,
    /// Input voltage in 0.1 V.
    pub voltage: u8,
    /// Temperature in degrees Celsius.
    pub temperature: u8,
    /// Status register error bits.
    pub status: ServoError,
    /// Whether the servo is moving.
    pub moving: bool,
    /// Present current, 6.5 mA per count.
    pub current: i32,
}

impl ServoState {
    /// Decodes a state block (`STATE_BLOCK_LEN` bytes starting at `STATE_BLOCK_ADDRESS`);
    /// `None` when `block` is shorter than that.
    pub fn from_block(block: &[u8]) -> Option<Self> {
        if block.len() < usize::from(STATE_BLOCK_LEN) {
            return None;
        }
        let field = |register: &Register| {
            let offset = usize::from(register.address - STATE_BLOCK_ADDRESS);
            register.decode(block.get(offset..).unwrap_or_default())
        };
        let byte = |register: &Register| u8::try_from(field(register)).unwrap_or(u8::MAX);
        Some(Self {
            position: field(&PRESENT_POSITION),
            velocity: field(&PRESENT_VELOCITY),
            load: field(&PRESENT_LOAD),
            voltage: byte(&PRESENT_VOLTAGE),
            temperature: byte(&PRESENT_TEMPERATURE),
            status: ServoError::from_bits_retain(byte(&STATUS)),
            moving: field(&MOVING) != 0,
            current: field(&PRESENT_CURRENT),
        })
    }
}
