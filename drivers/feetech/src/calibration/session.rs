//! Bus-facing steps of the interactive procedure; the prompts belong to the caller.
//!
//! 1. [`prepare`]: torque off (lock open) and position mode on every motor.
//! 2. The user puts the arm in the middle pose; [`home_at_middle`] writes homing offsets.
//! 3. The user moves every joint through its range while [`Sweep::sample`] runs repeatedly.
//! 4. [`Sweep::finish`] builds the calibration; [`super::apply`] writes limits, then save.

use std::collections::BTreeMap;

use tokio::io::{AsyncRead, AsyncWrite};

use super::procedure::{MotorSpec, RangeTracker, SweepResult, homing_offset_for_middle};
use super::{Calibration, CalibrationError, MotorCalibration};
use crate::bus::{Bus, BusError};
use crate::control_table::{HOMING_OFFSET, OPERATING_MODE, PRESENT_POSITION};

fn ids(motors: &[MotorSpec]) -> Vec<u8> {
    motors.iter().map(|m| m.id).collect()
}

/// Torque off (lock open) and position mode on every motor.
pub async fn prepare<T: AsyncRead + AsyncWrite + Unpin + Send>(
    bus: &mut Bus<T>,
    motors: &[MotorSpec],
) -> Result<(), CalibrationError> {
    for motor in motors {
        bus.torque_off(motor.id).await?;
        bus.write_eeprom(motor.id, &OPERATING_MODE, 0).await?;
    }
    Ok(())
}

/// Writes, for every motor, the homing offset that makes its current pose read
/// [`super::HALF_TURN`]; returns the offsets by id.
pub async fn home_at_middle<T: AsyncRead + AsyncWrite + Unpin + Send>(
    bus: &mut Bus<T>,
    motors: &[MotorSpec],
) -> Result<BTreeMap<u8, i32>, CalibrationError> {
    let mut offsets = BTreeMap::new();
    for motor in motors {
        let current = bus.read_register(motor.id, &HOMING_OFFSET).await?.value;
        let present = bus.read_register(motor.id, &PRESENT_POSITION).await?.value;
        let offset = homing_offset_for_middle(present, current);
        bus.write_eeprom(motor.id, &HOMING_OFFSET, offset).await?;
        offsets.insert(motor.id, offset);
    }
    Ok(offsets)
}

/// Range sweep over several motors (full-turn motors are not tracked).
#[derive(Debug, Clone)]
pub struct Sweep {
    motors: Vec<MotorSpec>,
    trackers: BTreeMap<u8, RangeTracker>,
}

impl Sweep {
    /// Starts a sweep of `motors`.
    pub fn new(motors: &[MotorSpec]) -> Self {
        Self {
            motors: motors.to_vec(),
            trackers: BTreeMap::new(),
        }
    }

    /// Feeds one reading of servo `id`.
    pub fn update(&mut self, id: u8, reading: i32) {
        if self.motors.iter().any(|m| m.id == id && !m.is_full_turn()) {
            self.trackers
                .entry(id)
                .and_modify(|t| t.update(reading))
                .or_insert_with(|| RangeTracker::new(reading));
        }
    }

    /// Reads every swept motor's position once (SYNC_READ) and feeds it; servos that
    /// failed this time are returned and simply skipped.
    pub async fn sample<T: AsyncRead + AsyncWrite + Unpin + Send>(
        &mut self,
        bus: &mut Bus<T>,
    ) -> Result<Vec<BusError>, CalibrationError> {
        let mut failures = Vec::new();
        for result in bus.sync_read_positions(&ids(&self.motors)).await? {
            match result {
                Ok(reply) => self.update(reply.id, reply.value),
                Err(error) => failures.push(error),
            }
        }
        Ok(failures)
    }

    /// Unwrapped `(min, max)` so far of servo `id`, for display.
    pub fn extent(&self, id: u8) -> Option<(i32, i32)> {
        self.trackers.get(&id).map(|t| (t.min(), t.max()))
    }

    /// The calibration, given the homing offsets in force during the sweep. Fails for a
    /// swept motor that never delivered a reading.
    pub fn finish(&self, offsets: &BTreeMap<u8, i32>) -> Result<Calibration, CalibrationError> {
        let mut calibration = Calibration::default();
        for motor in &self.motors {
            let offset = offsets.get(&motor.id).copied().unwrap_or(0);
            let result = if motor.is_full_turn() {
                SweepResult::full_turn(offset)
            } else {
                let tracker = self
                    .trackers
                    .get(&motor.id)
                    .ok_or_else(|| CalibrationError::InvalidMotor {
                        motor: motor.name.to_owned(),
                        reason: "no position was read during the sweep".to_owned(),
                    })?;
                tracker.finish(offset)
            };
            calibration.motors.insert(
                motor.name.to_owned(),
                MotorCalibration {
                    id: motor.id,
                    drive_mode: 0,
                    homing_offset: result.homing_offset,
                    range_min: result.range_min,
                    range_max: result.range_max,
                },
            );
        }
        Ok(calibration)
    }
}
