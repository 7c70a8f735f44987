//! The SO-100's nominal calibration: the same six STS3215 servos as the SO-101 (ids 1..=6,
//! LeRobot's motor names), swept over the SO-100's joint ranges; the default where no arm's own
//! file is given (a sim-only SO-100 daemon's units, the emulator's virtual SO-100).

use crate::calibration::Calibration;
use crate::calibration::so101::{NominalJoint, calibration_of, joint};

/// The six joints: ranges are the published SO-100 joint limits (MuJoCo Menagerie
/// `trs_so_arm100`, adjusted to the real arm on 2025-06-09: Rotation ±1.92 rad, Pitch
/// -3.32..0.174, Elbow -0.174..3.14, Wrist_Pitch ±1.66, Jaw -0.174..1.75) converted to steps
/// about 2047, each body joint's span centred there as LeRobot's half-turn homing centres it; a
/// full turn for the wrist roll, as LeRobot records it; the gripper's range is the Jaw's with
/// its model zero at 2047, as the SO-101's is. The homing offsets are arbitrary but fixed, other
/// than the SO-101's.
pub const JOINTS: [NominalJoint; 6] = [
    joint("shoulder_pan", 1, 612, 795, 3299),
    joint("shoulder_lift", 2, -1288, 908, 3186),
    joint("elbow_flex", 3, 743, 967, 3127),
    joint("wrist_flex", 4, -266, 965, 3129),
    joint("wrist_roll", 5, -1905, 0, 4095),
    joint("gripper", 6, 1377, 1934, 3188),
];

/// The calibration of the nominal SO-100 (its file, in memory).
pub fn nominal() -> Calibration {
    calibration_of(&JOINTS)
}
