//! The interactive calibration procedure as pure steps: middle-pose homing, a range sweep
//! that survives the 0/4095 wrap, and full-turn joints.
//!
//! Reading rule (single-turn mode): `present = (actual - homing_offset) mod 4096`.

use crate::control_table::{HOMING_OFFSET, STEPS_PER_TURN};
use crate::units::NormMode;

/// What the middle pose reads after homing (LeRobot's `int(4095 / 2)`).
pub const HALF_TURN: i32 = 2047;

/// Highest reading in single-turn mode.
const MAX_READING: i32 = STEPS_PER_TURN - 1;

/// A motor of an SO-101 arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MotorSpec {
    /// LeRobot motor name.
    pub name: &'static str,
    /// Servo id.
    pub id: u8,
    /// LeRobot normalisation (with `use_degrees`, its default).
    pub mode: NormMode,
}

impl MotorSpec {
    /// Whether the joint turns fully and gets the range 0..4095 without a sweep.
    pub fn is_full_turn(&self) -> bool {
        FULL_TURN_MOTORS.contains(&self.name)
    }
}

/// The six motors of an SO-101 arm (follower and leader alike).
pub const SO101_MOTORS: [MotorSpec; 6] = [
    MotorSpec {
        name: "shoulder_pan",
        id: 1,
        mode: NormMode::Degrees,
    },
    MotorSpec {
        name: "shoulder_lift",
        id: 2,
        mode: NormMode::Degrees,
    },
    MotorSpec {
        name: "elbow_flex",
        id: 3,
        mode: NormMode::Degrees,
    },
    MotorSpec {
        name: "wrist_flex",
        id: 4,
        mode: NormMode::Degrees,
    },
    MotorSpec {
        name: "wrist_roll",
        id: 5,
        mode: NormMode::Degrees,
    },
    MotorSpec {
        name: "gripper",
        id: 6,
        mode: NormMode::Range0To100,
    },
];

/// Motors treated as full turn (range 0..4095, no sweep), as LeRobot does.
pub const FULL_TURN_MOTORS: &[&str] = &["wrist_roll"];

/// Brings any offset into the register's range: modulo a turn into -2048..=2047, and -2048
/// (not representable in sign-magnitude) to -2047, one step off.
fn wrap_offset(offset: i32) -> i32 {
    let wrapped = wrap_half_turn(offset);
    wrapped.max(-HOMING_OFFSET.max_value())
}

/// `value` modulo a turn, in -2048..=2047.
fn wrap_half_turn(value: i32) -> i32 {
    let turn = STEPS_PER_TURN;
    let r = value.rem_euclid(turn);
    if r > turn / 2 - 1 { r - turn } else { r }
}

/// The homing offset that makes the current pose read [`HALF_TURN`], given the present
/// reading and the offset in force when it was taken (no need to reset it first).
pub fn homing_offset_for_middle(present: i32, current_offset: i32) -> i32 {
    wrap_offset(present + current_offset - HALF_TURN)
}

/// Calibrated offset and range of one motor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SweepResult {
    /// Homing offset to write.
    pub homing_offset: i32,
    /// `range_min` (reading after that offset).
    pub range_min: i32,
    /// `range_max`.
    pub range_max: i32,
}

impl SweepResult {
    /// A full-turn joint: keeps the offset, range 0..4095.
    pub fn full_turn(homing_offset: i32) -> Self {
        Self {
            homing_offset,
            range_min: 0,
            range_max: MAX_READING,
        }
    }
}

/// Tracks the extent of a manual sweep. Readings are unwrapped (each step taken as the
/// shortest way round), so a joint crossing 0/4095 keeps a contiguous range; sample often
/// enough that a joint never moves half a turn between two readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeTracker {
    last: i32,
    position: i32,
    min: i32,
    max: i32,
}

impl RangeTracker {
    /// Starts from the first reading.
    pub fn new(first: i32) -> Self {
        Self {
            last: first,
            position: first,
            min: first,
            max: first,
        }
    }

    /// Adds a reading.
    pub fn update(&mut self, reading: i32) {
        let step = wrap_half_turn(reading - self.last);
        self.last = reading;
        self.position = self.position.saturating_add(step);
        self.min = self.min.min(self.position);
        self.max = self.max.max(self.position);
    }

    /// Lowest unwrapped reading so far (may be below 0 after crossing the wrap).
    pub fn min(&self) -> i32 {
        self.min
    }

    /// Highest unwrapped reading so far (may exceed 4095 after crossing the wrap).
    pub fn max(&self) -> i32 {
        self.max
    }

    /// The calibration for this sweep, taken with `homing_offset` in force. When the swept
    /// range crosses 0/4095 the offset is moved so the range's middle reads
    /// [`HALF_TURN`] and the range fits 0..4095; a sweep of a full turn or more gives the
    /// full range.
    pub fn finish(&self, homing_offset: i32) -> SweepResult {
        let span = self.max - self.min;
        if span >= MAX_READING {
            return SweepResult::full_turn(homing_offset);
        }
        if self.min >= 0 && self.max <= MAX_READING {
            return SweepResult {
                homing_offset,
                range_min: self.min,
                range_max: self.max,
            };
        }
        let middle = self.min + span / 2;
        let new_offset = wrap_offset(homing_offset + middle - HALF_TURN);
        let shift = wrap_half_turn(new_offset - homing_offset);
        let range_min = (self.min - shift).rem_euclid(STEPS_PER_TURN);
        let range_max = (range_min + span).min(MAX_READING);
        SweepResult {
            homing_offset: new_offset,
            range_min,
            range_max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a servo reads for `actual` with `offset` in force.
    fn reading(actual: i32, offset: i32) -> i32 {
        (actual - offset).rem_euclid(STEPS_PER_TURN)
    }

    #[test]
    fn middle_pose_reads_half_turn() {
        for (actual, old_offset) in [(3000, 0), (100, 0), (4000, 500), (2047, -30), (10, 2047)] {
            let present = reading(actual, old_offset);
            let offset = homing_offset_for_middle(present, old_offset);
            assert!(offset.abs() <= 2047, "{offset}");
            assert_eq!(reading(actual, offset), HALF_TURN, "actual {actual}");
        }
    }

    #[test]
    fn unrepresentable_offset_is_one_step_off() {
        // actual 4095 needs offset 2048 (or -2048): neither fits 11 bits.
        let offset = homing_offset_for_middle(4095, 0);
        assert_eq!(offset, -2047);
        assert_eq!(reading(4095, offset), 2046);
    }

    #[test]
    fn sweep_inside_the_turn_keeps_offset() {
        let mut tracker = RangeTracker::new(2047);
        for r in [1800, 900, 1500, 3100, 2500] {
            tracker.update(r);
        }
        assert_eq!(
            tracker.finish(-12),
            SweepResult {
                homing_offset: -12,
                range_min: 900,
                range_max: 3100
            }
        );
    }

    #[test]
    fn sweep_across_the_wrap_recentres() {
        // Readings cross 4095 -> 0: the naive min/max would give 0..4095.
        let mut tracker = RangeTracker::new(4000);
        for r in [4090, 10, 200, 150, 3950] {
            tracker.update(r);
        }
        assert_eq!((tracker.min(), tracker.max()), (3950, 4296));
        let result = tracker.finish(0);
        // Every swept position must read inside the new range, in the same order.
        let swept: Vec<i32> = [3950, 4000, 4095, 4096 + 10, 4096 + 200]
            .into_iter()
            .map(|actual| reading(actual, result.homing_offset))
            .collect();
        assert_eq!(swept.first(), Some(&result.range_min));
        assert_eq!(swept.last(), Some(&result.range_max));
        assert!(swept.windows(2).all(|w| w[0] < w[1]), "{swept:?}");
        assert!(result.homing_offset.abs() <= 2047);
        assert_eq!(reading(4096 + 27, result.homing_offset), HALF_TURN);
    }

    #[test]
    fn full_sweep_gives_full_range() {
        let mut tracker = RangeTracker::new(0);
        for r in (0..=8).map(|i| (i * 600) % 4096) {
            tracker.update(r);
        }
        assert_eq!(tracker.finish(7), SweepResult::full_turn(7));
    }

    #[test]
    fn wrist_roll_is_full_turn() {
        let full: Vec<&str> = SO101_MOTORS
            .iter()
            .filter(|m| m.is_full_turn())
            .map(|m| m.name)
            .collect();
        assert_eq!(full, vec!["wrist_roll"]);
        assert_eq!(SweepResult::full_turn(3).range_max, 4095);
    }
}
