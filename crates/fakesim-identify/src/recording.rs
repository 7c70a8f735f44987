//! A recording as the fit uses it: the goals sent to one arm with the time each took effect on
//! the bus, and the arm's measured positions with the time each was read, in the twin's radians.

use fakesim_twin::ArmType;

/// One recording of one arm.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Where it came from (a file name and, for a dataset, the episode).
    pub name: String,
    /// The arm recorded.
    pub arm: ArmType,
    /// Goals written: time (s) and the six goals (rad), in time order. Each holds until the next.
    pub goals: Vec<(f64, [f64; 6])>,
    /// Readings: time (s) and the six measured positions (rad), in time order.
    pub readings: Vec<(f64, [f64; 6])>,
    /// Whether torque was on at each reading (`None`: not recorded, taken as on).
    pub torque: Option<Vec<bool>>,
    /// Load (percent of full duty) at each reading, when recorded.
    pub load: Option<Vec<[f64; 6]>>,
}

impl Recording {
    /// Seconds from the first reading to the last.
    pub fn duration(&self) -> f64 {
        match (self.readings.first(), self.readings.last()) {
            (Some(a), Some(b)) => b.0 - a.0,
            _ => 0.0,
        }
    }

    /// Median time between readings (s), 0 with fewer than two.
    pub fn reading_period(&self) -> f64 {
        let mut dt: Vec<f64> = self.readings.windows(2).map(|w| w[1].0 - w[0].0).collect();
        if dt.is_empty() {
            return 0.0;
        }
        dt.sort_by(f64::total_cmp);
        dt[dt.len() / 2]
    }

    /// The goal of joint `j` in force at time `t`: the last written at or before `t`, or
    /// `before` when none was.
    pub fn goal_at(&self, j: usize, t: f64, before: f64) -> f64 {
        let n = self.goals.partition_point(|g| g.0 <= t);
        if n == 0 { before } else { self.goals[n - 1].1[j] }
    }

    /// The mean over `[lo, hi]` of joint `j`'s goal in force (`before` ahead of the first goal):
    /// the setpoint of a physics step spanning that interval, continuous in a shift of both ends.
    pub fn goal_mean(&self, j: usize, lo: f64, hi: f64, before: f64) -> f64 {
        let mut at = self.goals.partition_point(|g| g.0 <= lo);
        let mut value = if at == 0 { before } else { self.goals[at - 1].1[j] };
        let (mut t, mut sum) = (lo, 0.0);
        while let Some(&(next, goal)) = self.goals.get(at) {
            if next >= hi {
                break;
            }
            sum += value * (next - t);
            (t, value) = (next, goal[j]);
            at += 1;
        }
        sum += value * (hi - t);
        if hi > lo { sum / (hi - lo) } else { value }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_goals() -> Recording {
        Recording {
            name: "t".into(),
            arm: ArmType::So101,
            goals: vec![(1.0, [1.0; 6]), (2.0, [3.0; 6])],
            readings: vec![(0.0, [0.0; 6]), (0.5, [0.0; 6]), (1.0, [0.0; 6]), (3.0, [0.0; 6])],
            torque: None,
            load: None,
        }
    }

    #[test]
    fn goal_in_force_and_mean_over_a_step() {
        let r = two_goals();
        assert_eq!(r.goal_at(0, 0.5, -1.0), -1.0);
        assert_eq!(r.goal_at(0, 1.0, -1.0), 1.0);
        assert_eq!(r.goal_at(0, 2.5, -1.0), 3.0);
        assert!((r.goal_mean(0, 1.5, 2.5, -1.0) - 2.0).abs() < 1e-12);
        assert!((r.goal_mean(0, 0.5, 1.5, -1.0) - 0.0).abs() < 1e-12);
        assert!((r.goal_mean(0, 2.1, 2.2, -1.0) - 3.0).abs() < 1e-12);
        assert_eq!(r.reading_period(), 0.5);
        assert_eq!(r.duration(), 3.0);
    }
}
