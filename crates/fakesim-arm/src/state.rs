//! What one read of an arm returns.

use feetech::bus::Reply;
use feetech::control_table::ServoState;
use feetech::protocol::status::ServoError;

use crate::mapping::{CalibratedMapping, Joint};

/// Volts per unit of Present_Voltage.
const VOLTS_PER_UNIT: f64 = 0.1;
/// Percent per unit of Present_Load.
const LOAD_PERCENT_PER_UNIT: f64 = 0.1;
/// Milliamperes per unit of Present_Current.
const MILLIAMPS_PER_UNIT: f64 = 6.5;

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

impl JointState {
    /// Converts one servo's reply through the mapping: a state block, or a position with the
    /// rest of the servo's last state block.
    pub fn from_reply(mapping: &CalibratedMapping, joint: Joint, reply: &Reply<ServoState>) -> Self {
        let state = &reply.value;
        let steps = state.position;
        Self {
            position_rad: mapping.servo_to_rad(joint, steps),
            servo: Some(ServoReading {
                id: reply.id,
                steps,
                degrees: mapping.degrees(joint, steps),
                normalized: mapping.normalized(joint, steps),
                temperature_c: f64::from(state.temperature),
                voltage_v: f64::from(state.voltage) * VOLTS_PER_UNIT,
                load_percent: f64::from(state.load) * LOAD_PERCENT_PER_UNIT,
                current_ma: f64::from(state.current) * MILLIAMPS_PER_UNIT,
                error_flags: reply.error | state.status,
                moving: state.moving,
            }),
        }
    }
}
