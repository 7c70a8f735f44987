//! Position-mode goal tracking with a trapezoidal speed profile, advanced in simulated time.
//!
//! Positions are in encoder steps. The model keeps the *actual* (raw encoder) position; the
//! servo derives the present position from it by subtracting the homing offset.

use std::time::Duration;

/// Steps per revolution of the STS3215 magnetic encoder.
pub const STEPS_PER_TURN: f64 = 4096.0;

/// Fastest the emulated STS3215 turns, in steps per second (the `MAX_SPEED` of 3400 used by
/// Feetech-derived SDKs, about 50 RPM).
pub const MAX_SPEED_STEPS_PER_S: f64 = 3400.0;

/// Steps per second squared for one unit of the Acceleration register.
pub const ACCEL_STEPS_PER_S2_PER_UNIT: f64 = 100.0;

/// Acceleration register value used when the register holds 0 ("maximum").
pub const MAX_ACCEL_UNITS: u8 = 254;

/// Longest integration sub-step; smaller steps keep the profile accurate for coarse `dt`.
const SUBSTEP: Duration = Duration::from_millis(1);

/// Distance (in steps) under which a slow servo counts as having arrived.
const ARRIVAL_TOLERANCE: f64 = 0.5;

/// Kinematic state of one servo shaft.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Motion {
    /// Raw encoder position in `[0, 4096)`.
    actual: f64,
    /// Signed shaft speed in steps per second.
    velocity: f64,
    /// Signed acceleration applied during the last sub-step, in steps per second squared.
    acceleration: f64,
}

/// What the controller is asked to do during a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Drive {
    /// Goal in the present-position frame, already clamped to the position limits.
    pub(crate) goal: f64,
    /// Homing offset: present = actual - offset.
    pub(crate) offset: f64,
    /// Speed limit in steps per second.
    pub(crate) max_speed: f64,
    /// Acceleration limit in steps per second squared.
    pub(crate) max_accel: f64,
}

impl Motion {
    /// A shaft at rest at the given raw position.
    pub(crate) fn at_rest(actual: f64) -> Self {
        Self {
            actual: wrap(actual),
            velocity: 0.0,
            acceleration: 0.0,
        }
    }

    /// Raw encoder position in `[0, 4096)`.
    pub(crate) fn actual(&self) -> f64 {
        self.actual
    }

    /// Signed speed in steps per second.
    pub(crate) fn velocity(&self) -> f64 {
        self.velocity
    }

    /// Signed acceleration of the last step in steps per second squared.
    pub(crate) fn acceleration(&self) -> f64 {
        self.acceleration
    }

    /// Present position (raw minus homing offset), wrapped into `[0, 4096)`.
    pub(crate) fn present(&self, offset: f64) -> f64 {
        wrap(self.actual - offset)
    }

    /// Moves the shaft externally (by hand): the shaft stops at the new raw position.
    pub(crate) fn place(&mut self, actual: f64) {
        *self = Self::at_rest(actual);
    }

    /// Moves the shaft externally at a given speed (a hand guiding it).
    pub(crate) fn follow(&mut self, actual: f64, velocity: f64) {
        *self = Self::at_rest(actual);
        self.velocity = velocity;
    }

    /// Moves the shaft by `steps` without changing its speed (gearing that slips).
    pub(crate) fn shift(&mut self, steps: f64) {
        self.actual = wrap(self.actual + steps);
    }

    /// Advances the model by `dt`. With `drive == None` (torque off) the shaft stays put.
    pub(crate) fn step(&mut self, dt: Duration, drive: Option<Drive>) {
        let Some(drive) = drive else {
            self.velocity = 0.0;
            self.acceleration = 0.0;
            return;
        };
        let mut remaining = dt;
        while !remaining.is_zero() {
            let h = remaining.min(SUBSTEP);
            remaining -= h;
            if self.substep(h.as_secs_f64(), &drive) {
                break;
            }
        }
    }

    /// One integration step of `h` seconds; returns true once the shaft rests at the goal.
    fn substep(&mut self, h: f64, drive: &Drive) -> bool {
        // Goals never wrap: a single-turn servo travels the direct way inside 0..4095.
        let error = drive.goal - self.present(drive.offset);
        if error.abs() < ARRIVAL_TOLERANCE && self.velocity.abs() <= drive.max_accel * h {
            self.actual = wrap(drive.goal + drive.offset);
            self.velocity = 0.0;
            self.acceleration = 0.0;
            return true;
        }
        let braking_speed = (2.0 * drive.max_accel * error.abs()).sqrt();
        let wanted = error.signum() * drive.max_speed.min(braking_speed);
        let max_change = drive.max_accel * h;
        let change = (wanted - self.velocity).clamp(-max_change, max_change);
        self.acceleration = change / h;
        self.velocity += change;
        let mut travel = self.velocity * h;
        if travel.abs() > error.abs() && travel.signum() == error.signum() {
            travel = error;
            self.velocity = 0.0;
        }
        self.actual = wrap(self.actual + travel);
        false
    }
}

/// Wraps a step count into one turn, `[0, 4096)`.
pub(crate) fn wrap(steps: f64) -> f64 {
    let wrapped = steps.rem_euclid(STEPS_PER_TURN);
    // rem_euclid can return exactly 4096.0 for tiny negative inputs.
    if wrapped >= STEPS_PER_TURN { 0.0 } else { wrapped }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(goal: f64, max_speed: f64, max_accel: f64) -> Option<Drive> {
        Some(Drive {
            goal,
            offset: 0.0,
            max_speed,
            max_accel,
        })
    }

    #[test]
    fn cruise_speed_never_exceeds_the_limit_and_the_goal_is_reached() {
        let mut motion = Motion::at_rest(1000.0);
        let d = drive(3000.0, 1000.0, 10_000.0);
        let mut previous = motion.actual();
        // 2000 steps at 1000 steps/s plus 0.1 s lost ramping up and down: 2.1 s.
        for _ in 0..1100 {
            motion.step(Duration::from_millis(2), d);
            let travelled = motion.actual() - previous;
            // 1000 steps/s for 2 ms is at most 2 steps (plus float slack).
            assert!(travelled <= 2.0 + 1e-9, "travelled {travelled}");
            assert!(motion.velocity() <= 1000.0 + 1e-9);
            previous = motion.actual();
        }
        assert_eq!(motion.actual(), 3000.0);
        assert_eq!(motion.velocity(), 0.0);
    }

    #[test]
    fn acceleration_limit_shapes_the_start() {
        let mut motion = Motion::at_rest(0.0);
        // 1000 steps/s^2 from rest: 0.1 s covers 0.5 * 1000 * 0.01 = 5 steps.
        motion.step(Duration::from_millis(100), drive(2000.0, 3400.0, 1000.0));
        assert!((motion.actual() - 5.0).abs() < 0.2, "at {}", motion.actual());
        assert!((motion.velocity() - 100.0).abs() < 1e-6);
    }

    #[test]
    fn torque_off_keeps_the_shaft_still() {
        let mut motion = Motion::at_rest(1234.0);
        motion.step(Duration::from_secs(5), None);
        assert_eq!(motion.actual(), 1234.0);
    }

    #[test]
    fn present_position_subtracts_the_offset_and_wraps() {
        let motion = Motion::at_rest(100.0);
        assert_eq!(motion.present(200.0), 3996.0);
        assert_eq!(motion.present(-100.0), 200.0);
        assert_eq!(wrap(-1e-13), 0.0);
        assert_eq!(wrap(4096.0), 0.0);
    }

    #[test]
    fn goal_is_approached_in_the_present_frame_without_wrapping() {
        // Raw 50 with offset 100 reads 4046; the goal 4000 lies 46 steps lower.
        let mut motion = Motion::at_rest(50.0);
        let d = Some(Drive {
            goal: 4000.0,
            offset: 100.0,
            max_speed: 3400.0,
            max_accel: 25_400.0,
        });
        motion.step(Duration::from_secs(1), d);
        assert_eq!(motion.present(100.0), 4000.0);
        assert_eq!(motion.actual(), 4.0);
    }
}
