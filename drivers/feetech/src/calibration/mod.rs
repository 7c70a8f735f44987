//! LeRobot-compatible calibration: the JSON file, its directory layout, applying it to
//! servos, verifying servos against it, and the pure steps of the interactive procedure.

mod apply;
mod check;
mod file;
mod paths;
mod procedure;
mod session;
pub mod so100;
pub mod so101;

pub use apply::{AppliedMotor, Difference, apply, read_from_servos, verify};
pub use check::{STALE_FIX, StaleServos, UnusableCalibration, check_servos};
pub use file::{Calibration, CalibrationError, MotorCalibration};
pub use paths::{ArmKind, ArmRole, calibration_path, calibration_root, calibration_root_with, find_calibration};
pub use procedure::{
    FULL_TURN_MOTORS, HALF_TURN, MotorSpec, RangeTracker, SO101_MOTORS, SweepResult, homing_offset_for_middle,
};
pub use session::{Sweep, home_at_middle, prepare};
