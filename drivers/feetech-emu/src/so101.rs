//! A ready-made SO-101 arm: six calibrated STS3215 servos, ids 1..=6.

use crate::config::{EmuConfig, ServoConfig};
use feetech::calibration::{Calibration, MotorCalibration};

/// Present position of the middle pose after LeRobot's half-turn homing (`4095 / 2`).
pub const MIDDLE_POSITION: u16 = 2047;

/// One joint of the virtual arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct So101Joint {
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
pub const JOINTS: [So101Joint; 6] = [
    joint("shoulder_pan", 1, -870, 796, 3298),
    joint("shoulder_lift", 2, 412, 909, 3185),
    joint("elbow_flex", 3, -35, 946, 3148),
    joint("wrist_flex", 4, 980, 966, 3128),
    joint("wrist_roll", 5, 150, 0, 4095),
    joint("gripper", 6, -1520, 1933, 3185),
];

const fn joint(name: &'static str, id: u8, homing_offset: i16, min: u16, max: u16) -> So101Joint {
    So101Joint {
        name,
        id,
        homing_offset,
        range: (min, max),
    }
}

/// Builder for the virtual SO-101 bus.
#[derive(Debug, Clone, Copy, Default)]
pub struct VirtualSo101;

impl VirtualSo101 {
    /// The six servos, each resting at the middle of its calibrated range, torque off.
    pub fn servos() -> Vec<ServoConfig> {
        JOINTS.iter().map(servo_config).collect()
    }

    /// A 1 Mbaud bus carrying the six servos, no wire timing, no faults.
    pub fn config() -> EmuConfig {
        EmuConfig::new(Self::servos())
    }

    /// The calibration LeRobot would have written for this arm (its file, in memory).
    pub fn calibration() -> Calibration {
        let motors = JOINTS
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
}

/// Servo settings for one calibrated joint resting at the middle pose.
fn servo_config(joint: &So101Joint) -> ServoConfig {
    let raw = (i32::from(MIDDLE_POSITION) + i32::from(joint.homing_offset)).rem_euclid(4096);
    ServoConfig {
        raw_position: u16::try_from(raw).unwrap_or(MIDDLE_POSITION),
        homing_offset: joint.homing_offset,
        position_limits: joint.range,
        ..ServoConfig::new(joint.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joint_ranges_contain_the_middle_pose() {
        for joint in &JOINTS {
            assert!(joint.range.0 < MIDDLE_POSITION && MIDDLE_POSITION < joint.range.1);
            assert!(joint.homing_offset.unsigned_abs() <= 2047);
        }
        let ids: Vec<u8> = VirtualSo101::servos().iter().map(|s| s.id).collect();
        assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    }
}
