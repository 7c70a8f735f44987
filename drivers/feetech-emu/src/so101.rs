//! A ready-made SO-101 arm: six calibrated STS3215 servos, ids 1..=6.

use crate::config::{EmuConfig, ServoConfig};
use crate::error::EmuError;
pub use feetech::calibration::so101::{JOINTS, NominalJoint, calibration_of, joint};
use feetech::calibration::{Calibration, MotorCalibration};
use feetech::control_table::STEPS_PER_TURN;
use feetech::units::degrees_to_steps;

/// Present position of the middle pose after LeRobot's half-turn homing (`4095 / 2`).
pub const MIDDLE_POSITION: u16 = 2047;

/// Builder for the virtual SO-101 bus.
#[derive(Debug, Clone, Copy, Default)]
pub struct VirtualSo101;

impl VirtualSo101 {
    /// The six servos, each resting at the middle pose (2047), torque off.
    pub fn servos() -> Vec<ServoConfig> {
        Self::calibration()
            .by_id()
            .into_iter()
            .map(|(_, motor)| holding_motor(motor, i32::from(MIDDLE_POSITION)))
            .collect()
    }

    /// Servos holding `calibration` in their EEPROM (homing offset and limits), one per
    /// motor in id order, torque off. Each rests where the model's zero would read: the
    /// middle of its calibrated range, shifted by the joint's `offsets` (a mechanical zero
    /// that differs from the model's), kept inside the range.
    pub fn holding(calibration: &Calibration, offsets: &[JointOffset]) -> Result<Vec<ServoConfig>, EmuError> {
        calibration.validate()?;
        known_labels(calibration, "joint-offset", offsets.iter().map(|o| &o.label))?;
        Ok(calibration
            .by_id()
            .into_iter()
            .map(|(name, motor)| {
                let shift: i32 = offsets.iter().filter(|o| o.label == name).map(JointOffset::steps).sum();
                let middle = (motor.range_min + motor.range_max) / 2;
                holding_motor(motor, (middle + shift).clamp(motor.range_min, motor.range_max))
            })
            .collect())
    }

    /// Puts obstacles and slipping gearing on servos made by [`VirtualSo101::holding`] from
    /// the same calibration and offsets: an obstacle `DEG` degrees from the middle of the
    /// joint's calibrated range (the model's angle for joints 1-5; the servo reads the middle
    /// shifted by the joint's offsets, plus `DEG`), a slip rate as given.
    pub fn hinder(
        servos: &mut [ServoConfig],
        calibration: &Calibration,
        offsets: &[JointOffset],
        obstacles: &[JointOffset],
        slips: &[JointSlip],
    ) -> Result<(), EmuError> {
        known_labels(calibration, "obstacle", obstacles.iter().map(|o| &o.label))?;
        known_labels(calibration, "lose-steps", slips.iter().map(|s| &s.label))?;
        for (name, motor) in calibration.by_id() {
            let Some(servo) = servos.iter_mut().find(|s| s.id == motor.id) else {
                continue;
            };
            let shift: i32 = offsets.iter().filter(|o| o.label == name).map(JointOffset::steps).sum();
            let middle = (motor.range_min + motor.range_max) / 2 + shift;
            if let Some(obstacle) = obstacles.iter().rfind(|o| o.label == name) {
                let at = (middle + obstacle.steps()).clamp(0, STEPS_PER_TURN - 1);
                servo.obstacle = u16::try_from(at).ok();
            }
            if let Some(slip) = slips.iter().rfind(|s| s.label == name) {
                servo.slip_steps_per_s = slip.steps_per_s;
            }
        }
        Ok(())
    }

    /// A 1 Mbaud bus carrying the six servos, no wire timing, no faults.
    pub fn config() -> EmuConfig {
        EmuConfig::new(Self::servos())
    }

    /// The calibration the virtual arm holds: the SO-101's nominal one (the driver's
    /// [`feetech::calibration::so101::nominal`]).
    pub fn calibration() -> Calibration {
        feetech::calibration::so101::nominal()
    }
}

/// Refuses a `--flag LABEL=...` naming a joint the calibration does not have.
fn known_labels<'a>(
    calibration: &Calibration,
    flag: &'static str,
    mut labels: impl Iterator<Item = &'a String>,
) -> Result<(), EmuError> {
    match labels.find(|label| !calibration.motors.contains_key(*label)) {
        Some(unknown) => Err(EmuError::UnknownJoint {
            flag,
            label: unknown.clone(),
        }),
        None => Ok(()),
    }
}

/// A servo holding one motor's calibration whose present position reads `present`.
fn holding_motor(motor: &MotorCalibration, present: i32) -> ServoConfig {
    let raw = (present + motor.homing_offset).rem_euclid(STEPS_PER_TURN);
    let limit = |value: i32| u16::try_from(value).unwrap_or(0);
    ServoConfig {
        raw_position: limit(raw),
        homing_offset: i16::try_from(motor.homing_offset).unwrap_or(0),
        position_limits: (limit(motor.range_min), limit(motor.range_max)),
        ..ServoConfig::new(motor.id)
    }
}

/// A joint angle in degrees from the model's zero, given as `LABEL=DEG`: where a joint's
/// mechanical zero sits (`--joint-offset`), or where an obstacle stands (`--obstacle`).
#[derive(Debug, Clone, PartialEq)]
pub struct JointOffset {
    /// LeRobot motor name.
    pub label: String,
    /// Degrees (an offset: positive when the servo reads more than the model's angle).
    pub degrees: f64,
}

impl JointOffset {
    /// Parses `LABEL=DEG`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (label, degrees) = label_value(
            text,
            "DEGREES",
            |d| d.is_finite() && d.abs() <= 180.0,
            "the angle must be a number of degrees within ±180",
        )?;
        Ok(Self { label, degrees })
    }

    /// The offset in whole servo steps.
    pub fn steps(&self) -> i32 {
        degrees_to_steps(self.degrees)
    }
}

/// Fastest slip a joint may be given (steps per second at full load).
pub const MAX_SLIP_STEPS_PER_S: f64 = 10_000.0;

/// A joint whose gearing loses steps under load, given as `LABEL=STEPS_PER_S`.
#[derive(Debug, Clone, PartialEq)]
pub struct JointSlip {
    /// LeRobot motor name.
    pub label: String,
    /// Steps per second the shaft slips back at full load.
    pub steps_per_s: f64,
}

impl JointSlip {
    /// Parses `LABEL=STEPS_PER_S` (more than 0, at most [`MAX_SLIP_STEPS_PER_S`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        let (label, steps_per_s) = label_value(
            text,
            "STEPS_PER_S",
            |r| r > 0.0 && r <= MAX_SLIP_STEPS_PER_S,
            "the rate must be a number of steps per second in (0, 10000]",
        )?;
        Ok(Self { label, steps_per_s })
    }
}

/// Splits `LABEL=VALUE` and checks the value, naming the form and the rule on refusal.
fn label_value(text: &str, form: &str, accept: impl Fn(f64) -> bool, rule: &str) -> Result<(String, f64), String> {
    let (label, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not LABEL={form}"))?;
    let value = value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| accept(*v))
        .ok_or_else(|| format!("`{text}`: {rule}"))?;
    Ok((label.trim().to_owned(), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joint_ranges_contain_the_middle_pose() {
        for joint in JOINTS.iter().chain(&feetech::calibration::so100::JOINTS) {
            assert!(joint.range.0 < MIDDLE_POSITION && MIDDLE_POSITION < joint.range.1);
            assert!(joint.homing_offset.unsigned_abs() <= 2047);
        }
        let ids: Vec<u8> = VirtualSo101::servos().iter().map(|s| s.id).collect();
        assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn joint_offsets_parse_and_stay_in_a_half_turn() {
        let offset = JointOffset::parse("wrist_roll=-12.5").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(offset.label, "wrist_roll");
        assert_eq!(offset.steps(), -142);
        for bad in ["wrist_roll", "wrist_roll=x", "wrist_roll=200", "a=inf"] {
            assert!(JointOffset::parse(bad).is_err(), "{bad}");
        }
    }
}
