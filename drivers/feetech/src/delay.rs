//! A servo's transport delay, with the one meaning every model of the arm gives it (the twin,
//! its preview, the shadow, the fit's replays and the emulator): **a goal written at time `t`
//! drives its servo from `t + delay` on.** A model that steps time in slices (a physics step)
//! feeds each slice the mean of the goals driving the servo over it, weighted by time: the goal
//! itself when one drives the whole slice, and a value continuous in the delay when one arrives
//! within it (so a fit can move the delay by less than a step).
//!
//! It lives here, below every crate that models the arm, because the delay is the servo's: the
//! time from a goal's write on the bus to the servo's loop acting on it.

use std::collections::VecDeque;

/// Slack on the times compared (s): a goal written at `t` drives its servo from `t + delay`,
/// not one rounding error later.
const SLACK_S: f64 = 1e-9;

/// Goals written to `N` servos and the time each was written, each servo's held back by its own
/// delay.
#[derive(Debug, Clone, PartialEq)]
pub struct DelayLine<const N: usize> {
    delay_s: [f64; N],
    /// Goals as written, with their times, oldest first; the first stands for all time before
    /// the second (its time may be `-inf`). Never empty.
    written: VecDeque<(f64, [f64; N])>,
}

impl<const N: usize> DelayLine<N> {
    /// A line whose servos take `delay_s` (s) each, with `goals` driving them ever since.
    pub fn new(delay_s: [f64; N], goals: [f64; N]) -> Self {
        DelayLine {
            delay_s,
            written: VecDeque::from([(f64::NEG_INFINITY, goals)]),
        }
    }

    /// Each servo's delay (s).
    pub fn delays(&self) -> [f64; N] {
        self.delay_s
    }

    /// The longest delay of its servos (s).
    pub fn longest(&self) -> f64 {
        self.delay_s.iter().copied().fold(0.0, f64::max)
    }

    /// `goals` are written at `t`; what was written at or after `t` before (a state restored to
    /// an earlier time) is forgotten.
    pub fn write(&mut self, t: f64, goals: [f64; N]) {
        while self.written.len() > 1 && self.written.back().is_some_and(|w| w.0 >= t) {
            self.written.pop_back();
        }
        if self.written.back().is_some_and(|w| w.0 >= t) {
            self.written.clear();
        }
        self.written.push_back((t, goals));
    }

    /// Forgets what is on its way: `goals` drive the servos at once and ever since (a reset,
    /// torque switched on, a pose taken as the goal).
    pub fn restart(&mut self, goals: [f64; N]) {
        self.written.clear();
        self.written.push_back((f64::NEG_INFINITY, goals));
    }

    /// The goal driving servo `j` at `t`: the last written at or before `t − delay`.
    pub fn acting(&self, j: usize, t: f64) -> f64 {
        self.written[self.index_at(t - self.delay_s[j])].1[j]
    }

    /// The time-weighted mean of the goals driving servo `j` from `lo` to `hi`: what a model
    /// stepping from `lo` to `hi` feeds the servo ([`DelayLine::acting`] at `lo` when `hi <= lo`).
    pub fn acting_over(&self, j: usize, lo: f64, hi: f64) -> f64 {
        let (lo, hi) = (lo - self.delay_s[j], hi - self.delay_s[j]);
        let mut at = self.index_at(lo);
        let mut value = self.written[at].1[j];
        if hi <= lo || self.written.get(at + 1).is_none_or(|next| next.0 >= hi - SLACK_S) {
            // One goal drives the whole step: itself, not a mean rounded off it.
            return value;
        }
        let (mut t, mut sum) = (lo, 0.0);
        // A goal arriving within the slack of either end counts as arriving at that end.
        while let Some(&(next, goals)) = self.written.get(at + 1) {
            if next >= hi - SLACK_S {
                break;
            }
            sum += value * (next - t);
            (t, value) = (next, goals[j]);
            at += 1;
        }
        sum += value * (hi - t);
        sum / (hi - lo)
    }

    /// Forgets what no question about a time at or after `t` needs.
    pub fn forget_before(&mut self, t: f64) {
        let horizon = t - self.longest();
        while self.written.get(1).is_some_and(|w| w.0 <= horizon + SLACK_S) {
            self.written.pop_front();
        }
    }

    /// The index of the last goal written at or before `t` (the first when none was).
    fn index_at(&self, t: f64) -> usize {
        self.written.partition_point(|w| w.0 <= t + SLACK_S).saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two servos, 20 ms and 0 ms, at 0 ever since; 1 written at 1.0 s, 3 at 2.0 s.
    fn line() -> DelayLine<2> {
        let mut line = DelayLine::new([0.02, 0.0], [0.0, 0.0]);
        line.write(1.0, [1.0, 1.0]);
        line.write(2.0, [3.0, 3.0]);
        line
    }

    #[test]
    fn a_goal_drives_its_servo_from_its_write_plus_the_delay() {
        let line = line();
        assert_eq!(line.acting(0, 1.0199), 0.0);
        assert_eq!(line.acting(0, 1.02), 1.0);
        assert_eq!(line.acting(1, 1.0), 1.0);
        assert_eq!(line.acting(1, 0.9999), 0.0);
        assert_eq!(line.acting(0, 5.0), 3.0);
        assert_eq!(line.acting(0, -1e9), 0.0);
    }

    #[test]
    fn a_step_takes_the_time_weighted_mean_of_what_drives_it() {
        let line = line();
        // A step wholly after the arrival takes the goal; one across it the mean.
        assert!((line.acting_over(0, 1.02, 1.0225) - 1.0).abs() < 1e-6);
        assert!((line.acting_over(0, 1.01, 1.03) - 0.5).abs() < 1e-6);
        assert!((line.acting_over(1, 1.5, 2.5) - 2.0).abs() < 1e-6);
        assert!((line.acting_over(0, 0.52, 2.52) - 1.25).abs() < 1e-6);
        assert_eq!(line.acting_over(0, 1.5, 1.5), 1.0);
        // A step ending as the goal arrives takes none of it, one starting then all of it.
        assert_eq!(line.acting_over(0, 1.0175, 1.02), 0.0);
        assert_eq!(line.acting_over(0, 1.02, 1.0225), 1.0);
    }

    #[test]
    fn a_write_to_an_earlier_time_forgets_the_later_ones() {
        let mut line = line();
        line.write(1.5, [7.0, 7.0]);
        assert_eq!(line.acting(1, 3.0), 7.0);
        assert_eq!(line.acting(1, 1.2), 1.0);
        line.restart([9.0, 9.0]);
        assert_eq!(line.acting(0, -1e9), 9.0);
    }

    #[test]
    fn forgetting_keeps_what_later_times_need() {
        let mut line = line();
        line.forget_before(2.01);
        assert_eq!(line.acting(0, 2.01), 1.0);
        assert_eq!(line.acting(0, 2.02), 3.0);
        assert_eq!(line.written.len(), 2);
    }
}
