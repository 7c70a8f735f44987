//! A servo's reply as the arm's vocabulary: its reading in the twin's radians and physical
//! units, and a failed attempt as the health counters count it.

use fakesim_arm::{AttemptFailure, Joint, JointState, ServoHealth, ServoReading};
use feetech::bus::{BusError, Reply};
use feetech::control_table::ServoState;

use crate::mapping::CalibratedMapping;

/// Volts per unit of Present_Voltage.
const VOLTS_PER_UNIT: f64 = 0.1;
/// Percent per unit of Present_Load.
const LOAD_PERCENT_PER_UNIT: f64 = 0.1;
/// Milliamperes per unit of Present_Current.
const MILLIAMPS_PER_UNIT: f64 = 6.5;

/// Converts one servo's reply through the mapping: a state block, or a position with the rest
/// of the servo's last state block.
pub(crate) fn joint_state(mapping: &CalibratedMapping, joint: Joint, reply: &Reply<ServoState>) -> JointState {
    let state = &reply.value;
    let steps = state.position;
    JointState {
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

/// Counts one failed attempt (before any retry) on the servo's health.
pub(crate) fn attempt_failed(servo: &mut ServoHealth, error: &BusError) {
    let kind = match error {
        BusError::NoReply { .. } | BusError::Timeout { .. } => AttemptFailure::Timeout,
        BusError::Checksum { .. } | BusError::BadLength { .. } | BusError::EchoMismatch => AttemptFailure::Corrupt,
        _ => AttemptFailure::Other,
    };
    servo.attempt_failed(kind, error.to_string());
}
