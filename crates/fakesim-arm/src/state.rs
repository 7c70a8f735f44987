//! What one read of an arm returns.

use feetech::protocol::status::ServoError;

use crate::Joint;

/// Every joint of the arm at one instant, in action-key order.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ArmState {
    /// One entry per joint, indexed by [`Joint::index`].
    pub joints: [JointState; 6],
}

impl ArmState {
    /// Joint positions in the twin's radians.
    pub fn positions_rad(&self) -> [f64; 6] {
        self.joints.map(|j| j.position_rad)
    }

    /// One joint.
    pub fn joint(&self, joint: Joint) -> &JointState {
        &self.joints[joint.index()]
    }
}

/// One joint's reading.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct JointState {
    /// Position in the twin's radians.
    pub position_rad: f64,
    /// The servo's own reading (`None` for the twin).
    pub servo: Option<ServoReading>,
}

/// One servo's reading in physical units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServoReading {
    /// Servo id.
    pub id: u8,
    /// Present position in calibrated steps.
    pub steps: i32,
    /// Degrees about the middle of the calibrated range.
    pub degrees: f64,
    /// LeRobot's value: degrees for joints 1-5, 0..100 for the gripper.
    pub normalized: f64,
    /// Temperature (degrees Celsius).
    pub temperature_c: f64,
    /// Input voltage (V).
    pub voltage_v: f64,
    /// Load, signed percent of full PWM duty.
    pub load_percent: f64,
    /// Current draw, signed milliamperes.
    pub current_ma: f64,
    /// Error flags of the reply and of the Status register together.
    pub error_flags: ServoError,
    /// Whether the servo reports moving.
    pub moving: bool,
}
