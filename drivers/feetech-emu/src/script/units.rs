//! The units a waypoint file or a dataset gives joint positions in: LeRobot's.

use feetech::calibration::MotorCalibration;
use feetech::units::NormMode;

use super::ScriptError;

/// LeRobot's name of the hinge gripper, which LeRobot always gives as 0..100.
const GRIPPER: &str = "gripper";

/// How a script's positions are given: as LeRobot's SO-101 classes give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ScriptUnits {
    /// Joints 1-5 in degrees about the middle of the calibrated range (`use_degrees=True`).
    #[default]
    Degrees,
    /// Joints 1-5 as -100..100 over the calibrated range (`use_degrees=False`).
    Range,
}

impl ScriptUnits {
    /// LeRobot's mode for the joint `label`: the gripper is 0..100 over its range in both.
    fn mode(self, label: &str) -> NormMode {
        match self {
            _ if label == GRIPPER => NormMode::Range0To100,
            ScriptUnits::Degrees => NormMode::Degrees,
            ScriptUnits::Range => NormMode::RangeM100To100,
        }
    }

    /// The present position (steps) of `value` for the joint `label` holding `motor`.
    pub(crate) fn steps(self, label: &str, motor: &MotorCalibration, value: f64) -> Result<f64, ScriptError> {
        if !value.is_finite() {
            return Err(ScriptError::Invalid(format!("{label}: {value} is not a position")));
        }
        motor
            .range()
            .unnormalize(self.mode(label), value)
            .map(f64::from)
            .map_err(|empty| ScriptError::Invalid(format!("{label}: {empty}")))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn degrees_and_range_units_land_where_lerobot_puts_them() {
        let motor = MotorCalibration {
            id: 3,
            drive_mode: 0,
            homing_offset: 0,
            range_min: 1000,
            range_max: 3000,
        };
        let degrees = ScriptUnits::Degrees;
        assert_eq!(degrees.steps("elbow_flex", &motor, 0.0).unwrap(), 2000.0);
        // 90 degrees is 4095 / 4 steps in LeRobot's scale.
        assert_eq!(degrees.steps("elbow_flex", &motor, 90.0).unwrap(), 3024.0);
        assert_eq!(ScriptUnits::Range.steps("elbow_flex", &motor, -100.0).unwrap(), 1000.0);
        assert_eq!(degrees.steps(GRIPPER, &motor, 50.0).unwrap(), 2000.0);
        assert!(degrees.steps("elbow_flex", &motor, f64::NAN).is_err());
    }
}
