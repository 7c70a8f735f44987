//! The SO-101's nominal calibration: the file LeRobot would write for an arm assembled as the
//! joint table says, the default where no arm's own file is given (a sim-only daemon's units,
//! the virtual arm of the emulator).

use crate::calibration::{Calibration, MotorCalibration};

/// One joint of a nominal arm (the SO-101's here, the SO-100's in `so100`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NominalJoint {
    /// LeRobot motor name.
    pub name: &'static str,
    /// Servo id.
    pub id: u8,
    /// Homing offset written by calibration (how the horn sat on the shaft).
    pub homing_offset: i16,
    /// Calibrated range (Min_Position_Limit, Max_Position_Limit) in steps.
    pub range: (u16, u16),
}

/// The six joints: ranges are the SO-101 joint limits (±110°, ±100°, ±96.8°, ±95°, a full
/// turn for the wrist roll, -10°..100° for the gripper) converted to steps about 2047; the
/// homing offsets are arbitrary but fixed, as on any assembled arm.
pub const JOINTS: [NominalJoint; 6] = [
    joint("shoulder_pan", 1, -870, 796, 3298),
    joint("shoulder_lift", 2, 412, 909, 3185),
    joint("elbow_flex", 3, -35, 946, 3148),
    joint("wrist_flex", 4, 980, 966, 3128),
    joint("wrist_roll", 5, 150, 0, 4095),
    joint("gripper", 6, -1520, 1933, 3185),
];

/// A nominal joint: LeRobot motor name, servo id, homing offset, calibrated range.
pub const fn joint(name: &'static str, id: u8, homing_offset: i16, min: u16, max: u16) -> NominalJoint {
    NominalJoint {
        name,
        id,
        homing_offset,
        range: (min, max),
    }
}

/// The calibration of the nominal SO-101 (its file, in memory).
pub fn nominal() -> Calibration {
    calibration_of(&JOINTS)
}

/// The calibration LeRobot would have written for an arm of `joints` (its file, in memory).
pub fn calibration_of(joints: &[NominalJoint]) -> Calibration {
    let motors = joints
        .iter()
        .map(|j| {
            let motor = MotorCalibration {
                id: j.id,
                drive_mode: 0,
                homing_offset: i32::from(j.homing_offset),
                range_min: i32::from(j.range.0),
                range_max: i32::from(j.range.1),
            };
            (j.name.to_owned(), motor)
        })
        .collect();
    Calibration { motors }
}
