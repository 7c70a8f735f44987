//! A virtual Feetech STS3215 servo bus.
//!
//! N emulated servos with their full control table (EEPROM with lock, RAM, torque, goal
//! tracking limited by speed and acceleration, present readings, status bits) answer the
//! Feetech protocol on a pseudo-terminal (which a driver opens like a USB adapter) or on an
//! in-memory duplex pipe. Framing and the control table come from the `feetech` crate's
//! protocol core. A servo can have an obstacle it cannot pass and gearing that slips under
//! load ([`ServoConfig`]). A hand can move the arm by a [`Script`] (a sweep, timed waypoints,
//! a LeRobot episode) and push against a joint ([`Push`]). Faults can be injected and hand motion
//! scripted at run time through the [`ServoBus`] handle; motion follows an injected [`Clock`].
//!
//! ```
//! use std::time::Duration;
//! use feetech::control_table as ct;
//! use feetech::protocol::instruction;
//! use feetech_emu::{ServoBus, VirtualSo101};
//!
//! // Simulated time: the servos only move when the clock is advanced.
//! let (bus, clock) = ServoBus::simulated(&VirtualSo101::config());
//! bus.handle_frame(&instruction::write(1, ct::TORQUE_ENABLE.address, &[1]));
//! bus.handle_frame(&instruction::write(1, ct::GOAL_POSITION.address, &[0x00, 0x09]));
//! clock.advance(Duration::from_secs(1));
//! assert_eq!(bus.present_position(1).unwrap(), 0x900);
//! ```
//!
//! `serve_pty(VirtualSo101::config())` serves the same bus on a pseudo-terminal in real
//! time; the `feetech-emu` binary does that until Ctrl-C and prints the device path.

pub mod arms;
pub mod cli;
pub mod clock;
pub mod config;
pub mod error;
pub mod faults;
pub mod field;
pub mod script;
pub mod so101;
pub mod timeline;
pub mod transport;
pub mod wire_timing;
pub mod write_log;

mod bus;
mod grip;
mod handle;
mod hindrance;
mod motion;
mod response;
mod rng;
mod servo;
mod table;

pub use arms::VirtualArm;
pub use bus::Reply;
pub use clock::{Clock, ManualClock, SystemClock};
pub use config::{EmuConfig, ServoConfig};
pub use error::EmuError;
pub use faults::FaultConfig;
pub use handle::ServoBus;
pub use hindrance::LOAD_PER_BLOCKED_STEP;
pub use motion::{ACCEL_STEPS_PER_S2_PER_UNIT, MAX_ACCEL_UNITS, MAX_SPEED_STEPS_PER_S};
pub use response::Response;
pub use script::{Push, Script};
pub use so101::VirtualSo101;
pub use transport::{Link, PtyBus, RunningBus, serve, serve_pty, serve_pty_bus, serve_pty_linked, spawn_duplex};
pub use write_log::WriteRecord;
