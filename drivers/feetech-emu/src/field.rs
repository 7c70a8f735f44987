//! LeRobot calibration files of SO-101 arms as they are in the field: ranges swept to the
//! mechanical stops (10–30° wider than the model's), and one file from LeRobot before the
//! wrist roll became a full turn. The ranges of the five body joints are those reported for
//! real followers and a leader; the gripper ranges are chosen near the ≈1590..2626 seen on
//! real arms, and the homing offsets are arbitrary, as on any assembled arm.

use feetech::calibration::Calibration;

/// `(name, LeRobot JSON)` of every field arm.
pub const FIELD_ARMS: [(&str, &str); 4] = [
    ("follower_a", include_str!("../arms/follower_a.json")),
    ("follower_b", include_str!("../arms/follower_b.json")),
    ("leader", include_str!("../arms/leader.json")),
    (
        "follower_older_lerobot",
        include_str!("../arms/follower_older_lerobot.json"),
    ),
];

/// Every field arm's calibration, parsed.
pub fn field_calibrations() -> Vec<(&'static str, Calibration)> {
    FIELD_ARMS
        .iter()
        .filter_map(|(name, json)| Some((*name, Calibration::from_json(json).ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use feetech::calibration::SO101_MOTORS;

    #[test]
    fn every_field_file_parses_and_is_usable() {
        let arms = field_calibrations();
        assert_eq!(arms.len(), FIELD_ARMS.len());
        for (name, calibration) in arms {
            assert_eq!(calibration.check_usable(&SO101_MOTORS), Ok(()), "{name}");
        }
    }
}
