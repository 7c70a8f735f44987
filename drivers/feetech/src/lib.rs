//! Feetech STS3215 servo driver: a pure protocol core, the control table as data,
//! unit conversions and LeRobot normalisation.
//!
//! The protocol core ([`protocol`], [`control_table`], [`units`]) does no I/O and is shared
//! with the servo emulator in `drivers/feetech-emu`.

pub mod bus;
pub mod calibration;
pub mod configure;
pub mod control_table;
pub mod protocol;
pub mod units;
