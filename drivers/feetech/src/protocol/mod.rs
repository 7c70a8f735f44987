//! Pure (I/O-free) implementation of the Feetech SCS/STS serial protocol.

pub mod decoder;
pub mod frame;
pub mod instruction;
pub mod status;
pub mod sync_read;

/// The broadcast id: every servo executes the instruction and none replies (except to PING).
pub const BROADCAST_ID: u8 = 0xFE;

/// Largest id a servo can be given (the ID register accepts 0..=253).
pub const MAX_SERVO_ID: u8 = 0xFD;
