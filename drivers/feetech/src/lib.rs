//! Feetech STS3215 servo driver: a pure protocol core, the control table as data,
//! unit conversions and LeRobot normalisation.
//!
//! The protocol core ([`protocol`], [`control_table`], [`units`], and the servo's transport
//! [`delay`] every model of the arm shares) does no I/O and is shared
//! with the servo emulator in `drivers/feetech-emu`; the `bus` feature (on by default) adds
//! the serial bus, calibration and configuration.

#[cfg(feature = "bus")]
pub mod bus;
#[cfg(feature = "bus")]
pub mod calibration;
#[cfg(feature = "bus")]
pub mod configure;
pub mod control_table;
pub mod delay;
pub mod protocol;
pub mod units;
