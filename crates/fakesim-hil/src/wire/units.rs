//! Joint values in LeRobot's units on the API: converted to and from the twin's radians through
//! the arm's calibration and the joint mapping.

use crate::wire::status;
use anyhow::Context;
use fakesim_arm::Joint;
use fakesim_feetech_arm::mapping::{CalibratedMapping, JointMapping, LeRobotUnit};
use fakesim_proto::v1;
use fakesim_twin::sim::JointInfo;
use fakesim_twin::values::{Bounds, ValueError};
use fakesim_twin::{ArmSpec, ArmType, JointValues, TwinError};
use feetech::calibration::{Calibration, so100, so101};
use std::path::Path;
use tonic::Status;

/// How far outside the servos' setpoint range a converted LeRobot value may land and still be
/// taken as the range's end (rad): the published model's `ctrlrange` is its joint range rounded
/// to five decimals, so LeRobot's own ends (a gripper at 0 or 100 %, a joint at ±100) land up to
/// 3 µrad beyond it.
const SETPOINT_ROUNDING_RAD: f64 = 1e-5;

/// Converts joint values between a request's unit and the twin's radians.
#[derive(Debug, Clone)]
pub struct Units {
    arm: &'static ArmSpec,
    mapping: CalibratedMapping,
    twin_ranges: [Bounds; 6],
    setpoint_ranges: [Bounds; 6],
}

impl Units {
    /// Conversions for `arm` (whose twin's joints are `joints`, action-key order) with the
    /// joint mapping `table` through the given calibration file, or, without one, the nominal
    /// arm's.
    pub fn load(
        arm: &'static ArmSpec,
        table: &JointMapping,
        calibration: Option<&Path>,
        joints: &[JointInfo],
    ) -> anyhow::Result<Self> {
        let twin_ranges: [Bounds; 6] = std::array::from_fn(|i| joints[i].range);
        let (calibration, origin) = match (calibration, arm.kind) {
            (Some(file), _) => (Calibration::load(file)?, file.display().to_string()),
            (None, ArmType::So101) => (so101::nominal(), "the nominal SO-101".to_owned()),
            (None, ArmType::So100) => (so100::nominal(), "the nominal SO-100".to_owned()),
        };
        let mapping = table
            .bind(&calibration, &twin_ranges)
            .with_context(|| format!("calibration of {origin} does not fit the twin"))?;
        Ok(Self {
            arm,
            mapping,
            twin_ranges,
            setpoint_ranges: std::array::from_fn(|i| joints[i].ctrl_range),
        })
    }

    /// Request values in `unit` as radians. Keys that name no joint, and vectors of the wrong
    /// length, pass unchanged so the usual checks refuse them; a converted value outside the
    /// twin's range is refused in the request's unit, with the conversion.
    pub fn to_radians(&self, values: JointValues, unit: i32) -> Result<JointValues, Status> {
        let Some(unit) = lerobot_unit(unit)? else {
            return Ok(values);
        };
        let convert = |joint: Option<Joint>, value: f64| match joint {
            Some(joint) => self.checked_radians(joint, value, unit),
            None => Ok(value),
        };
        Ok(match values {
            JointValues::Named(pairs) => JointValues::Named(
                pairs
                    .into_iter()
                    .map(|(key, value)| {
                        let joint = self.arm.resolve_joint(&key);
                        Ok((key, convert(joint, value)?))
                    })
                    .collect::<Result<_, Status>>()?,
            ),
            JointValues::Ordered(values) if values.len() == Joint::ALL.len() => JointValues::Ordered(
                values
                    .into_iter()
                    .enumerate()
                    .map(|(i, value)| convert(Joint::from_index(i), value))
                    .collect::<Result<_, Status>>()?,
            ),
            ordered @ JointValues::Ordered(_) => ordered,
        })
    }

    /// One LeRobot value as radians, refused when it lands outside the twin's joint range;
    /// one beyond the setpoint range by its rounding alone is that range's end.
    fn checked_radians(&self, joint: Joint, value: f64, unit: LeRobotUnit) -> Result<f64, Status> {
        let rad = self.mapping.lerobot_to_rad(joint, value, unit);
        let range = self.twin_ranges[joint.index()];
        if !value.is_finite() || (range.lo..=range.hi).contains(&rad) {
            let setpoints = self.setpoint_ranges[joint.index()];
            let rounded = rad.clamp(setpoints.lo, setpoints.hi);
            return Ok(if (rounded - rad).abs() <= SETPOINT_ROUNDING_RAD {
                rounded
            } else {
                rad
            });
        }
        let lo = self.mapping.rad_to_lerobot(joint, range.lo, unit);
        let hi = self.mapping.rad_to_lerobot(joint, range.hi, unit);
        let refusal = TwinError::Value(ValueError::OutOfRange {
            joint: joint.label().to_owned(),
            value,
            lo: round3(lo.min(hi)),
            hi: round3(lo.max(hi)),
            unit: unit_name(joint, unit),
            hint: Some(format!(
                "LeRobot units: {value} = {rad:.3} rad, outside the twin's [{:.3}, {:.3}] rad",
                range.lo, range.hi
            )),
        });
        Err(status::from_twin(&refusal))
    }

    /// Joint positions in action-key order (radians) in `unit`.
    pub fn positions_in(&self, positions: &[f64], unit: i32) -> Result<Vec<f64>, Status> {
        let Some(unit) = lerobot_unit(unit)? else {
            return Ok(positions.to_vec());
        };
        Ok(positions
            .iter()
            .enumerate()
            .map(|(i, rad)| match Joint::from_index(i) {
                Some(joint) => self.mapping.rad_to_lerobot(joint, *rad, unit),
                None => *rad,
            })
            .collect())
    }
}

/// The name of a LeRobot unit for one joint, as refusals spell it.
fn unit_name(joint: Joint, unit: LeRobotUnit) -> &'static str {
    match (joint, unit) {
        (Joint::Gripper, _) => "percent (LeRobot 0..100)",
        (_, LeRobotUnit::Degrees) => "deg (LeRobot)",
        (_, LeRobotUnit::Range) => "LeRobot -100..100",
    }
}

/// Rounds to three decimals for a readable refusal.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The LeRobot unit a request names, `None` for radians; an unknown value is refused.
fn lerobot_unit(unit: i32) -> Result<Option<LeRobotUnit>, Status> {
    match v1::JointUnit::try_from(unit) {
        Ok(v1::JointUnit::Unspecified | v1::JointUnit::Radians) => Ok(None),
        Ok(v1::JointUnit::LerobotDegrees) => Ok(Some(LeRobotUnit::Degrees)),
        Ok(v1::JointUnit::LerobotRange) => Ok(Some(LeRobotUnit::Range)),
        Err(_) => Err(status::invalid_argument(
            "unit",
            format!("unit {unit} is not a JointUnit (0..3)"),
        )),
    }
}
