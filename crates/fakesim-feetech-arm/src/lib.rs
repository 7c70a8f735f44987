//! The Feetech SO-101 as an [`fakesim_arm::Arm`]: one task owns the serial bus, reads all six
//! servos with one sync read, and writes goals with one sync write.

mod actor;
mod feetech_arm;

pub use feetech_arm::{FeetechArm, FeetechArmConfig};
