//! Applying a calibration to servos, reading it back, and verifying servos against it.

use tokio::io::{AsyncRead, AsyncWrite};

use super::{Calibration, CalibrationError, MotorCalibration};
use crate::bus::{Bus, BusError, EepromWrite};
use crate::control_table::{HOMING_OFFSET, MAX_POSITION_LIMIT, MIN_POSITION_LIMIT, Register};

/// The EEPROM registers a calibration sets, with the field of each.
fn calibrated_registers(motor: &MotorCalibration) -> [(&'static Register, i32); 3] {
    [
        (&HOMING_OFFSET, motor.homing_offset),
        (&MIN_POSITION_LIMIT, motor.range_min),
        (&MAX_POSITION_LIMIT, motor.range_max),
    ]
}

/// What [`apply`] did to one motor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedMotor {
    /// Motor name.
    pub motor: String,
    /// Servo id.
    pub id: u8,
    /// Each calibrated register and whether it had to be written.
    pub writes: Vec<(&'static str, EepromWrite)>,
}

/// A way the servos disagree with a calibration file.
#[derive(Debug)]
pub enum Difference {
    /// A register holds another value than the file says.
    Value {
        /// Motor name.
        motor: String,
        /// Servo id.
        id: u8,
        /// Register name.
        register: &'static str,
        /// Value in the file.
        file: i32,
        /// Value in the servo.
        servo: i32,
    },
    /// The servo did not answer.
    Unreachable {
        /// Motor name.
        motor: String,
        /// Servo id.
        id: u8,
        /// Why.
        error: BusError,
    },
}

/// Writes homing offset and limits of every motor, only values that differ (see
/// [`Bus::write_registers`]: torque off, lock open, written, lock closed, read back, goal
/// set to the new present position before torque returns). The whole file is validated
/// before anything is written.
pub async fn apply<T: AsyncRead + AsyncWrite + Unpin + Send>(
    bus: &mut Bus<T>,
    calibration: &Calibration,
) -> Result<Vec<AppliedMotor>, CalibrationError> {
    calibration.validate()?;
    let mut applied = Vec::new();
    for (name, motor) in calibration.by_id() {
        let registers = calibrated_registers(motor);
        let outcomes = bus.write_registers(motor.id, &registers).await?;
        applied.push(AppliedMotor {
            motor: name.to_owned(),
            id: motor.id,
            writes: registers.iter().map(|(r, _)| r.name).zip(outcomes).collect(),
        });
    }
    Ok(applied)
}

/// Compares the servos with a calibration. Unreachable servos are reported as differences;
/// only a failing port is an error.
pub async fn verify<T: AsyncRead + AsyncWrite + Unpin + Send>(
    bus: &mut Bus<T>,
    calibration: &Calibration,
) -> Result<Vec<Difference>, CalibrationError> {
    let mut differences = Vec::new();
    for (name, motor) in calibration.by_id() {
        for (register, file) in calibrated_registers(motor) {
            match bus.read_register(motor.id, register).await {
                Ok(reply) if reply.value == file => {}
                Ok(reply) => differences.push(Difference::Value {
                    motor: name.to_owned(),
                    id: motor.id,
                    register: register.name,
                    file,
                    servo: reply.value,
                }),
                Err(error @ BusError::PortGone(_)) => return Err(error.into()),
                Err(error) => {
                    differences.push(Difference::Unreachable {
                        motor: name.to_owned(),
                        id: motor.id,
                        error,
                    });
                    break;
                }
            }
        }
    }
    Ok(differences)
}

/// Reads the calibration stored in the servos of `motors` (`(name, id)` pairs); drive mode
/// is not stored in servos and comes back as 0.
pub async fn read_from_servos<T: AsyncRead + AsyncWrite + Unpin + Send>(
    bus: &mut Bus<T>,
    motors: &[(&str, u8)],
) -> Result<Calibration, CalibrationError> {
    let mut calibration = Calibration::default();
    for (name, id) in motors {
        let homing_offset = bus.read_register(*id, &HOMING_OFFSET).await?.value;
        let range_min = bus.read_register(*id, &MIN_POSITION_LIMIT).await?.value;
        let range_max = bus.read_register(*id, &MAX_POSITION_LIMIT).await?.value;
        calibration.motors.insert(
            (*name).to_owned(),
            MotorCalibration {
                id: *id,
                drive_mode: 0,
                homing_offset,
                range_min,
                range_max,
            },
        );
    }
    Ok(calibration)
}
