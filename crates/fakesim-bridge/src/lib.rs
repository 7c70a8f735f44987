//! The hil runtime of fakesim-hil: the modes (sim, mirror, hil), the bridge that mirrors the
//! real arm into the twin and sends commands through the safety layers, the actuations the
//! episode engine uses in each mode, teleoperation, and the hardware status.
//!
//! - [`hil`]: the modes, the mirror loop and the actuations of hardware in the loop.
//! - [`teleop`]: a leader arm drives a follower and the twin.
//! - [`telemetry`]: the hardware status snapshot.
//! - [`twin`]: the twin as an arm, as the safety pipeline's preview and as the table layer's
//!   kinematics.
//!
//! The arm's vocabulary lives in `fakesim-arm`, the Feetech backend in `fakesim-feetech-arm`,
//! the safety layers in `fakesim-safety`. Positions are plain `f64` radians in the twin's
//! frame, in action-key order.

pub mod hil;
pub mod telemetry;
pub mod teleop;
pub mod twin;

/// The runtime's clock (paused and advanced by tokio in tests) as a std instant.
fn now() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}
