//! The joint mapping table: which servo drives which twin joint, and how servo steps become
//! the twin's radians.
//!
//! For joints 1-5 a servo position is first read as LeRobot-normalised degrees about the
//! middle of the calibrated range (the "new calibration" model, whose zero is the middle of
//! each joint's range), then `rad = sign * deg.to_radians() + offset`. The gripper's
//! calibrated range (LeRobot's 0..100, 0 closed) maps linearly onto a radian interval of the
//! twin's gripper hinge, then the same sign and offset apply.
//!
//! The SO-101 default ([`JointMapping::so101`]):
//!
//! | servo | twin joint | label | sign | offset | conversion |
//! |---|---|---|---|---|---|
//! | 1 | `"1"` | shoulder_pan | +1 | 0 | degrees |
//! | 2 | `"2"` | shoulder_lift | +1 | 0 | degrees |
//! | 3 | `"3"` | elbow_flex | +1 | 0 | degrees |
//! | 4 | `"4"` | wrist_flex | +1 | 0 | degrees |
//! | 5 | `"5"` | wrist_roll | +1 | 0 | degrees |
//! | 6 | `"6"` | gripper | +1 | 0 | 0..100 % onto -0.174533..1.7453292 rad |
//!
//! The SO-100 default ([`JointMapping::so100`]) maps the same servos onto the SO-100 model's
//! joints, whose Pitch (-3.32..0.174 rad) and Elbow (-0.174..3.14 rad) ranges are not centred
//! on 0: LeRobot's 0° (the middle of the calibrated range) goes to the middle of the model's.
//!
//! | servo | twin joint | label | sign | offset | conversion |
//! |---|---|---|---|---|---|
//! | 1 | `Rotation` | shoulder_pan | +1 | 0 | degrees |
//! | 2 | `Pitch` | shoulder_lift | +1 | -1.573 | degrees |
//! | 3 | `Elbow` | elbow_flex | +1 | 1.483 | degrees |
//! | 4 | `Wrist_Pitch` | wrist_flex | +1 | 0 | degrees |
//! | 5 | `Wrist_Roll` | wrist_roll | +1 | 0 | degrees |
//! | 6 | `Jaw` | gripper | +1 | 0 | 0..100 % onto -0.174..1.75 rad |
//!
//! The signs assume the servo and the model turn the same way, as the "new calibration" model
//! intends; `fakesim-hil align` measures signs and offsets on a real arm and writes a table
//! file (JSON, [`JointMapping::load`]).
//!
//! [`JointMapping::bind`] checks a table against a calibration and yields the
//! [`CalibratedMapping`] that converts. Calibrated ranges wider or narrower than the twin's
//! are accepted: [`CalibratedMapping::effective_ranges`] gives, per joint, the intersection
//! that commands stay in. Only a range that does not overlap the twin's at all is refused.

mod calibrated;
mod effective;
mod error;

use std::path::Path;

use fakesim_arm::{ArmSpec, ArmType, Bounds, Joint};
use feetech::calibration::Calibration;
use serde::{Deserialize, Serialize};

pub use calibrated::{CalibratedMapping, LeRobotUnit};
pub use effective::EffectiveRange;
pub use error::MappingError;

/// The twin's gripper hinge range (rad): closed at the low end, open at the high end.
pub const SO101_GRIPPER_RANGE: Bounds = Bounds {
    lo: -0.174_533,
    hi: 1.745_329_2,
};

/// The SO-100 model's Jaw range (rad): closed at the low end, open at the high end.
pub const SO100_GRIPPER_RANGE: Bounds = Bounds { lo: -0.174, hi: 1.75 };

/// The middle of the SO-100 model's Pitch range, -3.32..0.174 rad: where LeRobot's 0° of the
/// shoulder lift lands.
const SO100_PITCH_MIDDLE_RAD: f64 = (-3.32 + 0.174) / 2.0;

/// The middle of the SO-100 model's Elbow range, -0.174..3.14 rad: where LeRobot's 0° of the
/// elbow flex lands. The model's upper end is 3.14 as written, not π.
#[allow(clippy::approx_constant)]
const SO100_ELBOW_MIDDLE_RAD: f64 = (-0.174 + 3.14) / 2.0;

/// How a servo's calibrated position becomes an angle before sign and offset.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Conversion {
    /// LeRobot's DEGREES mode: `(steps - middle) * 360 / 4095` degrees, then radians.
    Degrees,
    /// LeRobot's RANGE_0_100 mode mapped linearly: 0 % is `at_0_rad`, 100 % is `at_100_rad`.
    Percent {
        /// Angle at 0 % (closed gripper).
        at_0_rad: f64,
        /// Angle at 100 % (open gripper).
        at_100_rad: f64,
    },
}

/// One row of the mapping table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointMap {
    /// Servo id on the bus.
    pub servo_id: u8,
    /// The twin's joint name (`"1"`..`"6"` on the SO-101, `Rotation`..`Jaw` on the SO-100).
    pub twin_joint: String,
    /// LeRobot motor name, the key of the calibration file.
    pub label: String,
    /// +1 when servo and twin turn the same way, -1 when opposite.
    pub sign: i8,
    /// Added after the sign (rad).
    pub offset_rad: f64,
    /// Unit conversion from calibrated steps.
    pub conversion: Conversion,
}

/// The whole table: one row per twin joint, in the twin's action-key order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointMapping {
    /// Rows, row `i` for the twin's joint `i` in action-key order.
    pub joints: [JointMap; 6],
}

impl Default for JointMapping {
    fn default() -> Self {
        Self::so101()
    }
}

impl JointMapping {
    /// The SO-101 default: servo `i` drives twin joint `"i"`, LeRobot labels, sign +1, no
    /// offset; degrees for joints 1-5, and the gripper's 0..100 onto [`SO101_GRIPPER_RANGE`].
    pub fn so101() -> Self {
        Self::defaults(&fakesim_arm::arms::SO101, [0.0; 5], SO101_GRIPPER_RANGE)
    }

    /// The SO-100 default: the registry's joint names, sign +1, LeRobot's 0° at the middle of
    /// the model's Pitch and Elbow ranges (0 elsewhere), and the gripper's 0..100 onto
    /// [`SO100_GRIPPER_RANGE`].
    pub fn so100() -> Self {
        let offsets = [0.0, SO100_PITCH_MIDDLE_RAD, SO100_ELBOW_MIDDLE_RAD, 0.0, 0.0];
        Self::defaults(&fakesim_arm::arms::SO100, offsets, SO100_GRIPPER_RANGE)
    }

    /// The default table of an arm.
    pub fn for_arm(arm: ArmType) -> Self {
        match arm {
            ArmType::So101 => Self::so101(),
            ArmType::So100 => Self::so100(),
        }
    }

    /// A table for `arm`: servo ids and joint names from the registry, sign +1, `offsets` for
    /// joints 1-5 in degrees, the gripper's 0..100 onto `gripper`.
    fn defaults(arm: &ArmSpec, offsets: [f64; 5], gripper: Bounds) -> Self {
        Self {
            joints: Joint::ALL.map(|joint| {
                let (offset_rad, conversion) = match offsets.get(joint.index()) {
                    Some(offset) => (*offset, Conversion::Degrees),
                    None => (
                        0.0,
                        Conversion::Percent {
                            at_0_rad: gripper.lo,
                            at_100_rad: gripper.hi,
                        },
                    ),
                };
                let row = arm.joint(joint);
                JointMap {
                    servo_id: row.servo_id,
                    twin_joint: row.name.to_owned(),
                    label: row.label.to_owned(),
                    sign: 1,
                    offset_rad,
                    conversion,
                }
            }),
        }
    }

    /// The arm whose model names the table's twin joints, if the rows name one arm's joints.
    pub fn arm(&self) -> Option<ArmType> {
        ArmType::ALL.into_iter().find(|arm| {
            Joint::ALL
                .iter()
                .all(|&j| self.get(j).twin_joint == arm.spec().joint_name(j))
        })
    }

    /// Reads a table file (JSON, as [`JointMapping::to_json`] writes it); rows are checked
    /// when bound.
    pub fn load(path: &Path) -> Result<Self, MappingError> {
        let file = |reason: String| MappingError::File {
            path: path.display().to_string(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| file(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| file(e.to_string()))
    }

    /// The table as pretty JSON.
    pub fn to_json(&self) -> String {
        // Plain numbers and strings always serialise.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The row for a joint.
    pub fn get(&self, joint: Joint) -> &JointMap {
        &self.joints[joint.index()]
    }

    /// Checks the table against a calibration and the twin's joint ranges (see
    /// [`JointMapping::bind`]).
    pub fn validate(&self, calibration: &Calibration, twin_ranges: &[Bounds; 6]) -> Result<(), MappingError> {
        self.bind(calibration, twin_ranges).map(|_| ())
    }

    /// Checks the table against a calibration and the twin's joint ranges and returns the
    /// mapping that converts. Fails, naming the joint, when a row is malformed, a servo id is
    /// used twice, the calibration lacks a motor or gives it another id, or a calibrated range
    /// does not overlap the twin's (wider or narrower ranges are fine: see
    /// [`CalibratedMapping::effective_ranges`]).
    pub fn bind(
        &self,
        calibration: &Calibration,
        twin_ranges: &[Bounds; 6],
    ) -> Result<CalibratedMapping, MappingError> {
        self.check_rows()?;
        let mapping = CalibratedMapping::new(self, calibration)?;
        for (joint, range) in Joint::ALL.into_iter().zip(mapping.effective_ranges(twin_ranges)) {
            if range.effective.is_none() {
                return Err(MappingError::NoOverlap {
                    joint: self.get(joint).label.clone(),
                    calibrated_lo: range.calibrated.lo,
                    calibrated_hi: range.calibrated.hi,
                    twin_lo: range.twin.lo,
                    twin_hi: range.twin.hi,
                });
            }
        }
        Ok(mapping)
    }

    fn check_rows(&self) -> Result<(), MappingError> {
        // The arm whose joint the first row names (the SO-101 when none): every row must name
        // that arm's joint.
        let arm = ArmType::ALL
            .into_iter()
            .find(|arm| self.get(Joint::ShoulderPan).twin_joint == arm.spec().joint_name(Joint::ShoulderPan))
            .unwrap_or_default()
            .spec();
        for joint in Joint::ALL {
            let row = self.get(joint);
            if row.twin_joint != arm.joint_name(joint) {
                return Err(MappingError::WrongTwinJoint {
                    row: joint.index(),
                    expected: arm.joint_name(joint),
                    got: row.twin_joint.clone(),
                });
            }
            let invalid = |reason: String| MappingError::InvalidRow {
                joint: row.label.clone(),
                reason,
            };
            if row.sign != 1 && row.sign != -1 {
                return Err(invalid(format!("sign must be +1 or -1, got {}", row.sign)));
            }
            if !row.offset_rad.is_finite() {
                return Err(invalid(format!("offset {} rad is not finite", row.offset_rad)));
            }
            if let Conversion::Percent { at_0_rad, at_100_rad } = row.conversion
                && !(at_0_rad.is_finite() && at_100_rad.is_finite() && at_0_rad != at_100_rad)
            {
                return Err(invalid(format!(
                    "percent conversion {at_0_rad}..{at_100_rad} rad must be two different finite angles"
                )));
            }
            if let Some(other) = Joint::ALL
                .iter()
                .take(joint.index())
                .find(|other| self.get(**other).servo_id == row.servo_id)
            {
                return Err(MappingError::DuplicateServoId {
                    id: row.servo_id,
                    first: self.get(*other).label.clone(),
                    second: row.label.clone(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
