//! A mapping table bound to a calibration: the conversions between servo steps and radians.

use fakesim_arm::Bounds;
use feetech::calibration::{Calibration, MotorCalibration};
use uom::si::angle::radian;
use uom::si::f64::Angle;

use super::{Conversion, Joint, JointMap, JointMapping, MappingError};

/// LeRobot's degrees scale divides by 4095 (`resolution - 1`), not 4096; kept for fidelity.
const LEROBOT_MAX_RES: f64 = 4095.0;

/// One joint's conversion, with its calibrated range.
#[derive(Debug, Clone, Copy, PartialEq)]
struct BoundJoint {
    servo_id: u8,
    sign: f64,
    offset_rad: f64,
    conversion: Conversion,
    /// `range_min` (steps); strictly below `max`.
    min: i32,
    /// `range_max` (steps).
    max: i32,
    /// LeRobot `drive_mode` = 1 (inverts the percent scale only, as LeRobot does).
    inverted: bool,
}

impl Default for BoundJoint {
    fn default() -> Self {
        Self {
            servo_id: 0,
            sign: 1.0,
            offset_rad: 0.0,
            conversion: Conversion::Degrees,
            min: 0,
            max: 1,
            inverted: false,
        }
    }
}

impl BoundJoint {
    fn new(row: &JointMap, motor: &MotorCalibration) -> Result<Self, MappingError> {
        let invalid = |reason: String| MappingError::InvalidCalibration {
            joint: row.label.clone(),
            reason,
        };
        if motor.id != row.servo_id {
            return Err(MappingError::IdMismatch {
                joint: row.label.clone(),
                mapping_id: row.servo_id,
                calibration_id: motor.id,
            });
        }
        motor.validate(&row.label).map_err(|e| invalid(e.to_string()))?;
        if motor.range_max <= motor.range_min {
            return Err(invalid(format!(
                "calibrated range {}..{} is empty",
                motor.range_min, motor.range_max
            )));
        }
        Ok(Self {
            servo_id: row.servo_id,
            sign: f64::from(row.sign),
            offset_rad: row.offset_rad,
            conversion: row.conversion,
            min: motor.range_min,
            max: motor.range_max,
            inverted: motor.drive_mode != 0,
        })
    }

    fn middle(&self) -> f64 {
        (f64::from(self.min) + f64::from(self.max)) / 2.0
    }

    fn span(&self) -> f64 {
        f64::from(self.max) - f64::from(self.min)
    }

    /// LeRobot DEGREES: about the middle of the range, unclamped.
    fn degrees(&self, steps: i32) -> f64 {
        (f64::from(steps) - self.middle()) * 360.0 / LEROBOT_MAX_RES
    }

    /// Where a position lies in the calibrated range, 0..1 (clamped), turned round by the drive
    /// mode as LeRobot's RANGE modes do.
    fn fraction(&self, steps: f64) -> f64 {
        let fraction = (steps.clamp(f64::from(self.min), f64::from(self.max)) - f64::from(self.min)) / self.span();
        if self.inverted { 1.0 - fraction } else { fraction }
    }

    /// The position (steps, unrounded, unclamped) at a fraction of the calibrated range.
    fn at_fraction(&self, fraction: f64) -> f64 {
        let fraction = if self.inverted { 1.0 - fraction } else { fraction };
        f64::from(self.min) + fraction * self.span()
    }

    /// LeRobot RANGE_0_100: clamped into the range, inverted by the drive mode.
    fn percent(&self, steps: i32) -> f64 {
        self.fraction(f64::from(steps)) * 100.0
    }

    fn normalized(&self, steps: i32) -> f64 {
        match self.conversion {
            Conversion::Degrees => self.degrees(steps),
            Conversion::Percent { .. } => self.percent(steps),
        }
    }

    fn radians(&self, steps: i32) -> f64 {
        let base = match self.conversion {
            Conversion::Degrees => self.degrees(steps).to_radians(),
            Conversion::Percent { at_0_rad, at_100_rad } => {
                at_0_rad + self.percent(steps) / 100.0 * (at_100_rad - at_0_rad)
            }
        };
        self.sign * base + self.offset_rad
    }

    /// The servo position (steps, unrounded, unclamped) of a twin angle.
    fn raw_steps(&self, rad: f64) -> f64 {
        let base = (rad - self.offset_rad) * self.sign;
        match self.conversion {
            Conversion::Degrees => base.to_degrees() * LEROBOT_MAX_RES / 360.0 + self.middle(),
            Conversion::Percent { at_0_rad, at_100_rad } => {
                self.at_fraction((base - at_0_rad) / (at_100_rad - at_0_rad))
            }
        }
    }

    /// The twin angle of a servo position (steps, unrounded), without clamping.
    fn radians_at(&self, steps: f64) -> f64 {
        let base = match self.conversion {
            Conversion::Degrees => ((steps - self.middle()) * 360.0 / LEROBOT_MAX_RES).to_radians(),
            Conversion::Percent { at_0_rad, at_100_rad } => {
                let fraction = (steps - f64::from(self.min)) / self.span();
                let fraction = if self.inverted { 1.0 - fraction } else { fraction };
                at_0_rad + fraction * (at_100_rad - at_0_rad)
            }
        };
        self.sign * base + self.offset_rad
    }

    fn steps(&self, rad: f64) -> Option<i32> {
        if !rad.is_finite() {
            return None;
        }
        // Finite and clamped into min..max (0..=4095), so the cast is exact.
        #[allow(clippy::cast_possible_truncation)]
        let steps = self
            .raw_steps(rad)
            .round()
            .clamp(f64::from(self.min), f64::from(self.max)) as i32;
        Some(steps)
    }

    /// A twin angle as LeRobot reports it in `unit` (the gripper always 0..100).
    fn lerobot_value(&self, rad: f64, unit: LeRobotUnit) -> f64 {
        let steps = self.raw_steps(rad);
        match (self.conversion, unit) {
            (Conversion::Percent { .. }, _) => self.fraction(steps) * 100.0,
            (Conversion::Degrees, LeRobotUnit::Degrees) => (steps - self.middle()) * 360.0 / LEROBOT_MAX_RES,
            (Conversion::Degrees, LeRobotUnit::Range) => self.fraction(steps) * 200.0 - 100.0,
        }
    }

    /// A LeRobot value in `unit` as the twin angle, unclamped (range checks come later).
    fn radians_of_lerobot(&self, value: f64, unit: LeRobotUnit) -> f64 {
        let steps = match (self.conversion, unit) {
            (Conversion::Percent { .. }, _) => self.at_fraction(value / 100.0),
            (Conversion::Degrees, LeRobotUnit::Degrees) => value * LEROBOT_MAX_RES / 360.0 + self.middle(),
            (Conversion::Degrees, LeRobotUnit::Range) => self.at_fraction((value + 100.0) / 200.0),
        };
        self.radians_at(steps)
    }
}

/// LeRobot's units for the SO-101's joints; the gripper is 0..100 in both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeRobotUnit {
    /// Degrees about the middle of the calibrated range (`use_degrees=True`, the default).
    Degrees,
    /// -100..100 over the calibrated range (`use_degrees=False`).
    Range,
}

/// A [`JointMapping`] checked against a calibration (and the twin's ranges): converts servo
/// steps to the twin's radians and back. Built by [`JointMapping::bind`].
#[derive(Debug, Clone, PartialEq)]
pub struct CalibratedMapping {
    joints: [BoundJoint; 6],
}

impl CalibratedMapping {
    /// Binds every row to its calibrated motor (range checks are left to the caller).
    pub(super) fn new(table: &JointMapping, calibration: &Calibration) -> Result<Self, MappingError> {
        let mut joints = [BoundJoint::default(); 6];
        for joint in Joint::ALL {
            let row = table.get(joint);
            let motor = calibration
                .motors
                .get(&row.label)
                .ok_or_else(|| MappingError::MissingMotor {
                    joint: row.label.clone(),
                    servo_id: row.servo_id,
                })?;
            joints[joint.index()] = BoundJoint::new(row, motor)?;
        }
        Ok(Self { joints })
    }

    fn joint(&self, joint: Joint) -> &BoundJoint {
        &self.joints[joint.index()]
    }

    /// A servo position (calibrated steps, as read) as the twin joint's angle.
    pub fn servo_to_twin(&self, joint: Joint, steps: i32) -> Angle {
        Angle::new::<radian>(self.servo_to_rad(joint, steps))
    }

    /// A twin joint angle as the servo goal in steps, rounded and clamped into the calibrated
    /// range; `None` for a non-finite angle.
    pub fn twin_to_servo(&self, joint: Joint, angle: Angle) -> Option<i32> {
        self.rad_to_servo(joint, angle.get::<radian>())
    }

    /// [`CalibratedMapping::servo_to_twin`] in plain radians.
    pub fn servo_to_rad(&self, joint: Joint, steps: i32) -> f64 {
        self.joint(joint).radians(steps)
    }

    /// [`CalibratedMapping::twin_to_servo`] from plain radians.
    pub fn rad_to_servo(&self, joint: Joint, rad: f64) -> Option<i32> {
        self.joint(joint).steps(rad)
    }

    /// LeRobot degrees about the middle of the calibrated range (for every joint, the gripper
    /// included: its physical angle).
    pub fn degrees(&self, joint: Joint, steps: i32) -> f64 {
        self.joint(joint).degrees(steps)
    }

    /// The value LeRobot would record: degrees for joints 1-5, 0..100 for the gripper.
    pub fn normalized(&self, joint: Joint, steps: i32) -> f64 {
        self.joint(joint).normalized(steps)
    }

    /// A twin angle in a LeRobot unit, through the calibration: what LeRobot would report.
    pub fn rad_to_lerobot(&self, joint: Joint, rad: f64, unit: LeRobotUnit) -> f64 {
        self.joint(joint).lerobot_value(rad, unit)
    }

    /// A LeRobot value as the twin angle, through the calibration (not clamped).
    pub fn lerobot_to_rad(&self, joint: Joint, value: f64, unit: LeRobotUnit) -> f64 {
        self.joint(joint).radians_of_lerobot(value, unit)
    }

    /// The calibrated range in the twin's radians (`lo <= hi` whatever the sign).
    pub fn calibrated_limits(&self, joint: Joint) -> Bounds {
        let bound = self.joint(joint);
        let a = bound.radians(bound.min);
        let b = bound.radians(bound.max);
        Bounds {
            lo: a.min(b),
            hi: a.max(b),
        }
    }

    /// Every joint's calibrated range in the twin's radians, in action-key order.
    pub fn calibrated_ranges(&self) -> [Bounds; 6] {
        Joint::ALL.map(|joint| self.calibrated_limits(joint))
    }

    /// The servo id driving a joint.
    pub fn servo_id(&self, joint: Joint) -> u8 {
        self.joint(joint).servo_id
    }

    /// The servo ids in action-key order.
    pub fn servo_ids(&self) -> [u8; 6] {
        Joint::ALL.map(|joint| self.servo_id(joint))
    }

    /// The joint a servo drives.
    pub fn joint_of_servo(&self, id: u8) -> Option<Joint> {
        Joint::ALL.into_iter().find(|joint| self.servo_id(*joint) == id)
    }
}
