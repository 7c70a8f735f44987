//! The calibration JSON file: `{motor_name: {id, drive_mode, homing_offset, range_min, range_max}}`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize, Serializer};

use crate::bus::BusError;
use crate::control_table::{HOMING_OFFSET, STEPS_PER_TURN};
use crate::protocol::MAX_SERVO_ID;
use crate::units::CalibratedRange;

/// Calibration of one motor, field for field as LeRobot's `MotorCalibration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MotorCalibration {
    /// Servo id.
    pub id: u8,
    /// 1 inverts the normalised direction (always 0 on SO arms).
    pub drive_mode: u8,
    /// Value for the `Homing_Offset` register (|offset| <= 2047).
    pub homing_offset: i32,
    /// Value for `Min_Position_Limit` (steps after the homing offset).
    pub range_min: i32,
    /// Value for `Max_Position_Limit`.
    pub range_max: i32,
}

impl MotorCalibration {
    /// The calibrated range used for normalisation.
    pub fn range(&self) -> CalibratedRange {
        CalibratedRange {
            min: self.range_min,
            max: self.range_max,
            inverted: self.drive_mode != 0,
        }
    }

    /// Checks that the values can be written to a servo.
    pub fn validate(&self, motor: &str) -> Result<(), CalibrationError> {
        let invalid = |reason: String| CalibrationError::InvalidMotor {
            motor: motor.to_owned(),
            reason,
        };
        if self.id > MAX_SERVO_ID {
            return Err(invalid(format!("id {} is above {MAX_SERVO_ID}", self.id)));
        }
        if self.drive_mode > 1 {
            return Err(invalid(format!("drive_mode {} is not 0 or 1", self.drive_mode)));
        }
        if HOMING_OFFSET.try_encode(self.homing_offset).is_err() {
            return Err(invalid(format!("homing_offset {} exceeds ±2047", self.homing_offset)));
        }
        let max = STEPS_PER_TURN - 1;
        if !(0..=max).contains(&self.range_min)
            || !(0..=max).contains(&self.range_max)
            || self.range_min > self.range_max
        {
            return Err(invalid(format!(
                "range {}..{} is not inside 0..{max}",
                self.range_min, self.range_max
            )));
        }
        Ok(())
    }
}

/// Calibration of a whole arm, keyed by motor name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(transparent)]
pub struct Calibration {
    /// Motors by name.
    pub motors: BTreeMap<String, MotorCalibration>,
}

/// Failures reading, writing or applying a calibration.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// File involved.
        path: PathBuf,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a valid calibration.
    #[error("{path}: {source}")]
    Json {
        /// File involved.
        path: PathBuf,
        /// Underlying error.
        #[source]
        source: serde_json::Error,
    },
    /// A motor's values cannot be written to a servo.
    #[error("motor {motor}: {reason}")]
    InvalidMotor {
        /// Motor name.
        motor: String,
        /// What is wrong.
        reason: String,
    },
    /// Neither `HF_HOME`, `XDG_CACHE_HOME` nor `HOME` is set.
    #[error("cannot locate the calibration directory: no HF_HOME, XDG_CACHE_HOME or HOME")]
    NoHome,
    /// Talking to the servos failed.
    #[error(transparent)]
    Bus(#[from] BusError),
    /// The servos do not hold the file's calibration.
    #[error(transparent)]
    Stale(super::StaleServos),
}

impl Serialize for Calibration {
    /// Motors are written in id order (the order LeRobot writes SO arms in).
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut motors: Vec<(&String, &MotorCalibration)> = self.motors.iter().collect();
        motors.sort_by_key(|(name, motor)| (motor.id, name.as_str()));
        serializer.collect_map(motors)
    }
}

impl Calibration {
    /// Motors sorted by id.
    pub fn by_id(&self) -> Vec<(&str, &MotorCalibration)> {
        let mut motors: Vec<(&str, &MotorCalibration)> = self.motors.iter().map(|(n, m)| (n.as_str(), m)).collect();
        motors.sort_by_key(|(name, motor)| (motor.id, *name));
        motors
    }

    /// Checks every motor (see [`MotorCalibration::validate`]).
    pub fn validate(&self) -> Result<(), CalibrationError> {
        self.motors.iter().try_for_each(|(name, motor)| motor.validate(name))
    }

    /// Parses LeRobot's JSON.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Formats as LeRobot does (4-space indentation, motors in id order).
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
        // Serialising plain integers and strings into a Vec cannot fail.
        if self.serialize(&mut serializer).is_err() {
            return String::new();
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// Reads a calibration file.
    pub fn load(path: &Path) -> Result<Self, CalibrationError> {
        let text = std::fs::read_to_string(path).map_err(|source| CalibrationError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_json(&text).map_err(|source| CalibrationError::Json {
            path: path.to_owned(),
            source,
        })
    }

    /// Writes a calibration file, creating its directory; the file is replaced atomically.
    pub fn save(&self, path: &Path) -> Result<(), CalibrationError> {
        let io = |source| CalibrationError::Io {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let temporary = path.with_extension("json.tmp");
        std::fs::write(&temporary, self.to_json()).map_err(io)?;
        std::fs::rename(&temporary, path).map_err(io)
    }
}
