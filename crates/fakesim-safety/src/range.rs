//! Refuses joint targets outside the model's or the calibrated range; never clamps.

use super::{LimitSource, SafetyError, require_finite};
use fakesim_arm::{Bounds, Joint};

/// The range layer: a target must be finite and inside the twin model's range and, on a
/// real arm, inside the servo's calibrated range (mapped to the twin's radians). A target
/// outside is refused with the joint, value, range and unit; nothing is clamped.
#[derive(Debug, Clone, PartialEq)]
pub struct RangeGuard {
    model: [Bounds; 6],
    calibrated: Option<[Bounds; 6]>,
}

impl RangeGuard {
    /// Checks against the model's ranges only (sim-only).
    pub fn model_only(model: [Bounds; 6]) -> Self {
        Self {
            model,
            calibrated: None,
        }
    }

    /// Checks against the model's ranges and the calibrated ranges of a real arm (rad,
    /// action-key order).
    pub fn with_calibration(model: [Bounds; 6], calibrated: [Bounds; 6]) -> Self {
        Self {
            model,
            calibrated: Some(calibrated),
        }
    }

    /// The range a target of `joint` must lie in: both ranges intersected.
    pub fn limits(&self, joint: Joint) -> Bounds {
        let model = self.model[joint.index()];
        match self.calibrated {
            Some(calibrated) => {
                let calibrated = calibrated[joint.index()];
                Bounds {
                    lo: model.lo.max(calibrated.lo),
                    hi: model.hi.min(calibrated.hi),
                }
            }
            None => model,
        }
    }

    /// The calibrated ranges (rad, action-key order), with a real arm.
    pub fn calibrated(&self) -> Option<[Bounds; 6]> {
        self.calibrated
    }

    /// Accepts the targets (rad, action-key order) or refuses at the first bad joint.
    pub fn check(&self, goals: &[f64; 6]) -> Result<(), SafetyError> {
        require_finite(goals)?;
        for joint in Joint::ALL {
            let value = goals[joint.index()];
            within(joint, value, self.model[joint.index()], LimitSource::Model)?;
            if let Some(calibrated) = &self.calibrated {
                within(joint, value, calibrated[joint.index()], LimitSource::Calibrated)?;
            }
        }
        Ok(())
    }
}

fn within(joint: Joint, value: f64, bounds: Bounds, limit: LimitSource) -> Result<(), SafetyError> {
    if value >= bounds.lo && value <= bounds.hi {
        return Ok(());
    }
    Err(SafetyError::OutOfRange {
        joint,
        value,
        lo: bounds.lo,
        hi: bounds.hi,
        limit,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::SafetyEvent;

    const MODEL: [Bounds; 6] = [Bounds { lo: -1.0, hi: 1.0 }; 6];

    #[test]
    fn inside_both_ranges_passes_and_the_ends_are_inclusive() {
        let guard = RangeGuard::model_only(MODEL);
        guard.check(&[0.0, 1.0, -1.0, 0.5, -0.5, 0.99]).unwrap();
    }

    #[test]
    fn outside_the_model_range_is_refused_naming_joint_value_range_and_unit() {
        let guard = RangeGuard::model_only(MODEL);
        let err = guard.check(&[0.0, 0.0, 1.2, 0.0, 0.0, 0.0]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "elbow_flex=1.2000 rad (68.8 deg) is outside the model range [-1.0000, 1.0000] rad \
             ([-57.3, 57.3] deg); refused, not clamped"
        );
        assert_eq!(
            err.event(),
            SafetyEvent::RangeRefused {
                joint: Joint::ElbowFlex,
                value_rad: 1.2,
                lo_rad: -1.0,
                hi_rad: 1.0,
                limit: LimitSource::Model
            }
        );
    }

    #[test]
    fn non_finite_targets_are_refused() {
        let guard = RangeGuard::model_only(MODEL);
        let err = guard.check(&[0.0, 0.0, 0.0, f64::NAN, 0.0, 0.0]).unwrap_err();
        assert!(matches!(
            err,
            SafetyError::NonFinite {
                joint: Joint::WristFlex,
                ..
            }
        ));
    }

    #[test]
    fn the_calibrated_range_narrows_the_model_range() {
        use feetech::calibration::{Calibration, MotorCalibration};
        let motors = Joint::ALL
            .iter()
            .map(|joint| {
                // ±500 steps about 2047: about ±44 degrees (0.767 rad).
                let motor = MotorCalibration {
                    id: joint.default_servo_id(),
                    drive_mode: 0,
                    homing_offset: 0,
                    range_min: 1547,
                    range_max: 2547,
                };
                (joint.label().to_owned(), motor)
            })
            .collect();
        let mut table = fakesim_feetech_arm::mapping::JointMapping::so101();
        table.joints[5].conversion = fakesim_feetech_arm::mapping::Conversion::Percent {
            at_0_rad: -0.5,
            at_100_rad: 0.5,
        };
        let mapping = table.bind(&Calibration { motors }, &MODEL).unwrap();
        let guard = RangeGuard::with_calibration(MODEL, mapping.calibrated_ranges());
        let limits = guard.limits(Joint::ShoulderPan);
        assert!((limits.hi - 0.7672).abs() < 1e-3, "{limits:?}");
        assert_eq!(guard.limits(Joint::Gripper), Bounds { lo: -0.5, hi: 0.5 });
        guard.check(&[0.7, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap();
        let err = guard.check(&[0.9, 0.0, 0.0, 0.0, 0.0, 0.0]).unwrap_err();
        assert!(matches!(
            err,
            SafetyError::OutOfRange {
                joint: Joint::ShoulderPan,
                limit: LimitSource::Calibrated,
                ..
            }
        ));
    }
}
