//! The arm's vocabulary, below everything else: the arm registry ([`arms`]: SO-101, SO-100),
//! the six joints ([`joints`]), their ranges and
//! joint values with the refusals every write runs ([`values`]), one trait for "an arm" (the
//! Feetech SO-101 in `fakesim-feetech-arm`, the twin in `fakesim-bridge`), its state and
//! health types, and the errors every backend maps its own into. No physics, no bus.
//!
//! Positions are the twin's radians in action-key order. The arm applies no safety policy of
//! its own beyond refusing non-finite goals: the layers in `fakesim-safety` run first.

pub mod arms;
pub mod joints;
pub mod quote;
pub mod values;

mod health;
mod state;

use std::future::Future;
use std::pin::Pin;

pub use arms::{ArmSpec, ArmType, Side};
pub use health::{ArmHealth, AttemptFailure, CommCounters, LinkHealth, LinkState, ServoHealth, Torque};
pub use joints::Joint;
pub use state::{ArmState, JointState, ServoReading};
pub use values::{Bounds, ValueError};

/// A boxed future, so arms can be used as `dyn Arm`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An arm: read its joints, send goals, switch torque, report health.
pub trait Arm: Send + Sync {
    /// The port the arm is on (`None` for the twin).
    fn port(&self) -> Option<&str>;

    /// Reads every joint now.
    fn read_state(&self) -> BoxFuture<'_, Result<ArmState, ArmError>>;

    /// Sends goal positions (twin radians, action-key order) to all six joints at once.
    fn command(&self, goals_rad: [f64; 6]) -> BoxFuture<'_, Result<(), ArmError>>;

    /// Switches torque on (holding the present pose) or off, on every joint.
    fn set_torque(&self, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>>;

    /// Switches one joint's torque on (holding where it stands) or off.
    fn set_joint_torque(&self, joint: Joint, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>>;

    /// The latest health snapshot; never touches the bus, so it answers at once.
    fn health(&self) -> ArmHealth;
}

/// One servo that gave no valid reply, even after the retries.
#[derive(Debug, thiserror::Error)]
#[error("{joint} (servo {id}): {error}")]
pub struct ServoFailure {
    /// The joint it drives.
    pub joint: Joint,
    /// Its id.
    pub id: u8,
    /// The last error of the last attempt, as the backend reported it.
    pub error: String,
}

/// Why an arm operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ArmError {
    /// The serial port failed or went away; nothing is sent until it is back.
    #[error("the serial port {port} is lost: {reason}")]
    PortGone {
        /// The port.
        port: String,
        /// What the port reported.
        reason: String,
    },
    /// Some servos gave no valid reply after all retries (the others were handled).
    #[error("no valid reply after retries from {}", list(failures))]
    Unresponsive {
        /// The servos that failed.
        failures: Vec<ServoFailure>,
    },
    /// A goal that is NaN or infinite; nothing was sent.
    #[error("goal for {joint} is not a finite number: {value}")]
    NonFiniteGoal {
        /// The joint.
        joint: Joint,
        /// The value given.
        value: f64,
    },
    /// Any other failure on the link to the servos (may pass: worth another try).
    #[error("{0}")]
    Bus(String),
    /// The arm refused the goals (a twin arm checks its setpoint ranges); nothing was sent.
    #[error(transparent)]
    Refused(#[from] ValueError),
    /// The backend failed otherwise (a twin arm whose twin stopped or faulted).
    #[error("{0}")]
    Failed(String),
    /// The arm was closed; its task has ended.
    #[error("the arm is closed")]
    Closed,
}

fn list(failures: &[ServoFailure]) -> String {
    failures.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}
