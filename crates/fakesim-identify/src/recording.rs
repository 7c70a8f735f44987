//! A recording as the fit uses it: the goals sent to one arm with the time each took effect on
//! the bus, and the arm's measured positions with the time each was read, in the twin's radians.

use fakesim_twin::ArmType;
use feetech::delay::DelayLine;

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

    /// The goals written up to `to` on their way to the servos, each joint's held back by its
    /// delay (`delay_s`): the last written at or before `from` stands for all time before it,
    /// `before` when none was.
    pub fn delay_line(&self, delay_s: [f64; 6], from: f64, to: f64, before: [f64; 6]) -> DelayLine<6> {
        let first = self.goals.partition_point(|g| g.0 <= from);
        let mut line = DelayLine::new(delay_s, first.checked_sub(1).map_or(before, |i| self.goals[i].1));
        for &(t, goals) in self.goals[first..].iter().take_while(|g| g.0 <= to) {
            line.write(t, goals);
        }
        line
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
    fn the_goals_on_their_way_start_from_the_one_in_force() {
        let r = two_goals();
        let line = r.delay_line([0.5; 6], 1.5, 1.9, [-1.0; 6]);
        // The goal of 1.0 s stands for all before; the one of 2.0 s is past `to`.
        assert_eq!(line.acting(0, -5.0), 1.0);
        assert_eq!(line.acting(0, 9.0), 1.0);
        let all = r.delay_line([0.5; 6], 0.0, 9.0, [-1.0; 6]);
        assert_eq!(all.acting(0, 1.4), -1.0);
        assert_eq!(all.acting(0, 1.5), 1.0);
        assert_eq!(all.acting(0, 2.5), 3.0);
        assert!((all.acting_over(0, 2.0, 3.0) - 2.0).abs() < 1e-6);
        assert_eq!(r.reading_period(), 0.5);
        assert_eq!(r.duration(), 3.0);
    }
}
