//! Unit conversions: steps and degrees, and LeRobot's normalisation modes.

use crate::control_table::STEPS_PER_TURN;

/// LeRobot's scale for the degrees mode: it divides by 4095 (`resolution - 1`), not 4096.
const LEROBOT_MAX_RES: f64 = 4095.0;

/// Converts encoder steps to degrees (4096 steps per turn).
pub fn steps_to_degrees(steps: i32) -> f64 {
    f64::from(steps) * 360.0 / f64::from(STEPS_PER_TURN)
}

/// Converts degrees to the nearest encoder step (4096 steps per turn).
pub fn degrees_to_steps(degrees: f64) -> i32 {
    round_to_i32(degrees * f64::from(STEPS_PER_TURN) / 360.0)
}

/// How LeRobot presents a motor's position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NormMode {
    /// Degrees about the middle of the calibrated range (no clamping, no drive mode).
    Degrees,
    /// -100..100 over the calibrated range (body joints when `use_degrees` is off).
    RangeM100To100,
    /// 0..100 over the calibrated range (the gripper).
    Range0To100,
}

/// The calibrated range of one motor, in raw steps after the homing offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CalibratedRange {
    /// Lower limit (`range_min`).
    pub min: i32,
    /// Upper limit (`range_max`).
    pub max: i32,
    /// LeRobot's `drive_mode` = 1: invert the range modes.
    pub inverted: bool,
}

/// A calibrated range that cannot be normalised over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("calibrated range {min}..{max} is empty")]
pub struct EmptyRange {
    /// Lower limit.
    pub min: i32,
    /// Upper limit.
    pub max: i32,
}

impl CalibratedRange {
    /// Middle of the range, the zero of [`NormMode::Degrees`].
    pub fn middle(&self) -> f64 {
        (f64::from(self.min) + f64::from(self.max)) / 2.0
    }

    /// Converts a raw position to the normalised value, exactly as LeRobot does.
    pub fn normalize(&self, mode: NormMode, raw: i32) -> Result<f64, EmptyRange> {
        let Some((low, high)) = range_bounds(mode) else {
            return Ok((f64::from(raw) - self.middle()) * 360.0 / LEROBOT_MAX_RES);
        };
        let clamped = f64::from(raw.clamp(self.min, self.max));
        let fraction = (clamped - f64::from(self.min)) / self.span()?;
        let value = low + fraction * (high - low);
        Ok(if self.inverted { low + high - value } else { value })
    }

    /// Converts a normalised value back to a raw position. The range modes clamp the value
    /// to their bounds; unlike LeRobot (which truncates) the result is rounded to the
    /// nearest step, so [`CalibratedRange::normalize`] round-trips exactly.
    pub fn unnormalize(&self, mode: NormMode, value: f64) -> Result<i32, EmptyRange> {
        let Some((low, high)) = range_bounds(mode) else {
            return Ok(round_to_i32(value * LEROBOT_MAX_RES / 360.0 + self.middle()));
        };
        let span = self.span()?;
        let value = if self.inverted { low + high - value } else { value };
        let fraction = (value.clamp(low, high) - low) / (high - low);
        Ok(round_to_i32(fraction * span + f64::from(self.min)))
    }

    fn span(&self) -> Result<f64, EmptyRange> {
        if self.max <= self.min {
            return Err(EmptyRange {
                min: self.min,
                max: self.max,
            });
        }
        Ok(f64::from(self.max) - f64::from(self.min))
    }
}

/// Normalised bounds of a range mode; `None` for degrees, which is not a range mode.
fn range_bounds(mode: NormMode) -> Option<(f64, f64)> {
    match mode {
        NormMode::Range0To100 => Some((0.0, 100.0)),
        NormMode::RangeM100To100 => Some((-100.0, 100.0)),
        NormMode::Degrees => None,
    }
}

/// Rounds to the nearest integer, saturating at the `i32` bounds (NaN gives 0).
fn round_to_i32(value: f64) -> i32 {
    // `as` from float saturates and maps NaN to 0, which is the intent here.
    #[allow(clippy::cast_possible_truncation)]
    let rounded = value.round() as i32;
    rounded
}
