//! What the port task writes to a trace ([`fakesim_trace::Recorder`]): each reading at the time
//! its request went out on the bus, each goal write at the time it was sent, in the twin's
//! radians. Speed, load and voltage come from the servo's last state block (see
//! [`crate::cadence`]); the recorder never makes the task wait.

use crate::mapping::CalibratedMapping;
use fakesim_arm::{ArmState, Joint, ServoHealth};
use fakesim_trace::{Extras, Recorder};
use std::time::Instant;

/// Steps per second in one unit of Present_Speed.
const STEPS_PER_S_PER_UNIT: i32 = 50;

/// Records a reading of every joint taken at `at`; `velocity` is each servo's Present_Speed.
pub(crate) fn reading(
    recorder: &Recorder,
    mapping: &CalibratedMapping,
    at: Instant,
    state: &ArmState,
    velocity: [i32; 6],
    torque: bool,
) {
    let extras = Joint::ALL.map(|joint| {
        let j = joint.index();
        let servo = state.joints[j].servo;
        let steps = servo.map_or(0, |s| s.steps);
        let moved = steps.saturating_add(velocity[j].saturating_mul(STEPS_PER_S_PER_UNIT));
        Extras {
            speed_rad_s: mapping.servo_to_rad(joint, moved) - mapping.servo_to_rad(joint, steps),
            load_percent: servo.map_or(0.0, |s| s.load_percent),
            voltage_v: servo.map_or(0.0, |s| s.voltage_v),
        }
    });
    recorder.reading(at, state.positions_rad(), extras, torque);
}

/// Records the goals every servo holds after a write at `at`, once every servo has had one.
pub(crate) fn goals(
    recorder: &Recorder,
    mapping: &CalibratedMapping,
    at: Instant,
    servos: &[ServoHealth; 6],
    torque: bool,
) {
    let mut rad = [0.0; 6];
    for joint in Joint::ALL {
        let Some(steps) = servos[joint.index()].goal_steps else {
            return;
        };
        rad[joint.index()] = mapping.servo_to_rad(joint, steps);
    }
    recorder.goal(at, rad, torque);
}
