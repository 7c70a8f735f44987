//! The hardware side of hardware-in-the-loop for the SO-101.
//!
//! - [`mapping`]: the joint mapping table between Feetech servos (LeRobot calibration) and
//!   the twin's joints `"1"`..`"6"`, checked at start-up.
//! - [`arm`]: one trait for "an arm", with the Feetech SO-101 (a serial-port actor) and the
//!   twin itself as implementations.
//! - [`safety`]: the safety layers, one small type each, and the events they produce.
//! - [`telemetry`]: the hardware status snapshot.
//! - [`hil`]: the modes, the mirror loop and the actuations of hardware in the loop.
//!
//! Positions cross the public boundary of [`mapping`] as `uom` angles; everywhere else they
//! are plain `f64` radians in the twin's frame, in action-key order.

pub mod arm;
pub mod hil;
pub mod mapping;
pub mod safety;
pub mod telemetry;
pub mod teleop;
