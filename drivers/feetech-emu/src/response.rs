//! A servo's response beyond its registers, as a dynamics profile of a real arm describes it:
//! each goal acted on a transport delay after it was written, the shaft's speed and
//! acceleration capped where the real servo's torque and load cap them.

use crate::motion::MAX_SPEED_STEPS_PER_S;
use std::time::Duration;

/// How a servo's position loop responds (the default: at once, as fast as its registers let it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Response {
    /// Time from a goal's write to the position loop tracking it.
    pub delay: Duration,
    /// Fastest the shaft turns (steps/s), below the speed register's limit.
    pub max_speed_steps_per_s: f64,
    /// Largest acceleration (steps/s²), below the acceleration register's limit.
    pub max_accel_steps_per_s2: f64,
}

impl Default for Response {
    fn default() -> Self {
        Response {
            delay: Duration::ZERO,
            max_speed_steps_per_s: MAX_SPEED_STEPS_PER_S,
            max_accel_steps_per_s2: f64::INFINITY,
        }
    }
}

/// A servo's goals on their way to its loop ([`feetech::delay`], whose meaning every model of
/// the arm shares), on the servo's own clock.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DelayLine {
    line: feetech::delay::DelayLine<1>,
    /// Time since power-on (s).
    clock_s: f64,
    /// The register's last value seen.
    latest: Option<i32>,
}

impl DelayLine {
    /// A line holding goals back by `delay`.
    pub(crate) fn new(delay: Duration) -> Self {
        DelayLine {
            line: feetech::delay::DelayLine::new([delay.as_secs_f64()], [0.0]),
            clock_s: 0.0,
            latest: None,
        }
    }

    /// The loop tracks `goal` from now on, whatever was on its way (power-on, torque on).
    pub(crate) fn hold(&mut self, goal: i32) {
        self.line.restart([f64::from(goal)]);
        self.latest = Some(goal);
    }

    /// The goal register holds `goal` after a host write: a new value sets off on its way.
    pub(crate) fn written(&mut self, goal: i32) {
        if self.latest != Some(goal) {
            self.latest = Some(goal);
            self.line.write(self.clock_s, [f64::from(goal)]);
        }
    }

    /// `dt` passes.
    pub(crate) fn advance(&mut self, dt: Duration) {
        self.clock_s += dt.as_secs_f64();
        self.line.forget_before(self.clock_s);
    }

    /// The goal the loop tracks, given the register's `now`: the register itself before any
    /// goal was seen.
    pub(crate) fn acting(&self, now: i32) -> i32 {
        match self.latest {
            // A whole number of steps written: it converts back exactly.
            Some(_) => self.line.acting(0, self.clock_s) as i32,
            None => now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_goal_is_acted_on_once_its_delay_is_up() {
        let mut line = DelayLine::new(Duration::from_millis(20));
        line.hold(100);
        line.written(300);
        line.advance(Duration::from_millis(15));
        assert_eq!(line.acting(300), 100);
        line.written(400);
        line.advance(Duration::from_millis(5));
        assert_eq!(line.acting(400), 300);
        line.advance(Duration::from_millis(15));
        assert_eq!(line.acting(400), 400);
        line.hold(50);
        assert_eq!(line.acting(50), 50);
        assert_eq!(DelayLine::new(Duration::ZERO).acting(7), 7);
    }
}
