//! Start-up checks of a calibration: is the file usable for an arm, and do the servos hold it.

use std::fmt;

use tokio::io::{AsyncRead, AsyncWrite};

use super::procedure::MotorSpec;
use super::{Calibration, CalibrationError, Difference, verify};
use crate::bus::Bus;

/// What to do when the servos and the file disagree.
pub const STALE_FIX: &str = "re-run `fakesim-hil calibrate` for this arm, or start with \
     --write-calibration-to-servos to write the file into the servos";

/// Why a calibration file cannot drive an arm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnusableCalibration {
    /// A motor of the arm is not in the file.
    #[error("joint {joint} (id {id}) is missing from the file; re-run `fakesim-hil calibrate` for this arm")]
    MissingJoint {
        /// Motor name.
        joint: String,
        /// Servo id the arm expects.
        id: u8,
    },
    /// Two motors of the file name the same servo.
    #[error(
        "joints {joint} and {other} both use servo id {id}; fix the ids with `fakesim-hil setup-ids`, then re-run `fakesim-hil calibrate`"
    )]
    DuplicateId {
        /// Motor name.
        joint: String,
        /// The other motor with that id.
        other: String,
        /// The shared id.
        id: u8,
    },
    /// A motor's calibrated range holds a single position (or none).
    #[error(
        "joint {joint}: calibrated range {min}..{max} has no width; re-run `fakesim-hil calibrate` and move the joint through its whole range"
    )]
    ZeroWidth {
        /// Motor name.
        joint: String,
        /// `range_min`.
        min: i32,
        /// `range_max`.
        max: i32,
    },
    /// A motor's values cannot be written to a servo.
    #[error("joint {joint}: {reason}; re-run `fakesim-hil calibrate` for this arm")]
    Invalid {
        /// Motor name.
        joint: String,
        /// What is wrong.
        reason: String,
    },
}

impl Calibration {
    /// Checks that the file can drive an arm made of `motors`: every motor present, ids
    /// distinct, every value writable and every range wider than one position. Motors of
    /// the file that the arm does not have are ignored. The first problem is returned.
    pub fn check_usable(&self, motors: &[MotorSpec]) -> Result<(), UnusableCalibration> {
        for spec in motors {
            let Some(motor) = self.motors.get(spec.name) else {
                return Err(UnusableCalibration::MissingJoint {
                    joint: spec.name.to_owned(),
                    id: spec.id,
                });
            };
            motor
                .validate(spec.name)
                .map_err(|error| UnusableCalibration::Invalid {
                    joint: spec.name.to_owned(),
                    reason: match error {
                        CalibrationError::InvalidMotor { reason, .. } => reason,
                        other => other.to_string(),
                    },
                })?;
            if motor.range_max <= motor.range_min {
                return Err(UnusableCalibration::ZeroWidth {
                    joint: spec.name.to_owned(),
                    min: motor.range_min,
                    max: motor.range_max,
                });
            }
            let twin = motors
                .iter()
                .filter(|other| other.name != spec.name)
                .find(|other| self.motors.get(other.name).is_some_and(|m| m.id == motor.id));
            if let Some(other) = twin {
                return Err(UnusableCalibration::DuplicateId {
                    joint: spec.name.to_owned(),
                    other: other.name.to_owned(),
                    id: motor.id,
                });
            }
        }
        Ok(())
    }
}

/// The servos do not hold the file's calibration (or do not answer).
#[derive(Debug)]
pub struct StaleServos {
    /// Every disagreement found.
    pub differences: Vec<Difference>,
}

impl fmt::Display for StaleServos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unreachable = self
            .differences
            .iter()
            .any(|d| matches!(d, Difference::Unreachable { .. }));
        write!(f, "the servos do not hold the calibration file: ")?;
        for (index, difference) in self.differences.iter().enumerate() {
            if index > 0 {
                write!(f, "; ")?;
            }
            write!(f, "{difference}")?;
        }
        if unreachable {
            write!(f, ". Check power and cabling, and the ids with `fakesim-hil scan`")
        } else {
            write!(f, ". Fix: {STALE_FIX}")
        }
    }
}

impl std::error::Error for StaleServos {}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Value {
                motor,
                id,
                register,
                file,
                servo,
            } => write!(
                f,
                "joint {motor} (id {id}): {register} is {servo} in the servo, {file} in the file"
            ),
            Self::Unreachable { motor, id, error } => write!(f, "joint {motor} (id {id}) does not answer ({error})"),
        }
    }
}

/// Compares the servos with the file as LeRobot does at connect (Homing_Offset,
/// Min_Position_Limit, Max_Position_Limit of every motor). Any difference, or a servo that
/// does not answer, is an error naming the joint, both values and the fix.
pub async fn check_servos<T: AsyncRead + AsyncWrite + Unpin + Send>(
    bus: &mut Bus<T>,
    calibration: &Calibration,
) -> Result<(), CalibrationError> {
    let differences = verify(bus, calibration).await?;
    if differences.is_empty() {
        Ok(())
    } else {
        Err(CalibrationError::Stale(StaleServos { differences }))
    }
}
