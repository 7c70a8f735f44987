//! The Feetech SO-101 as an [`fakesim_arm::Arm`]: one task owns the serial bus, reads all six
//! servos with one sync read (the whole state block every few readings, the positions only
//! between), and writes goals with one sync write; the joint [`mapping`] converts between
//! servo steps and the twin's radians.

pub mod mapping;

mod actor;
mod cadence;
mod config;
mod feetech_arm;
mod ram;
mod reading;
mod reconnect;
mod trace;

pub use config::FeetechArmConfig;
pub use feetech_arm::FeetechArm;
pub use reconnect::{Reconnect, Reconnection};
