//! The ramp that keeps the real arm from jumping: after torque comes on or the arm is held,
//! the goals start at the held position and close the gap to the targets at a bounded speed,
//! while following the targets' own motion, until the gap is gone.

use std::time::{Duration, Instant};

/// An active ramp: the goals' offset from the targets, and when goals were last computed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Ramp {
    held: [f64; 6],
    /// `goals - targets`; `None` until the first targets arrive.
    offset: Option<[f64; 6]>,
    at: Instant,
}

impl Ramp {
    /// A ramp starting from the held position `held` at `at`.
    pub(crate) fn hold(held: [f64; 6], at: Instant) -> Self {
        Self { held, offset: None, at }
    }

    /// The next goals for `targets`: the gap between the held pose and the first targets
    /// shrinks by at most `speed_rad_s` times the time since the last goals, that time
    /// counting at most `max_step` (a pause is no licence to jump); an infinite speed closes
    /// it at once. Returns the goals and whether the gap is closed (the ramp is then done).
    pub(crate) fn advance(
        &mut self,
        targets: &[f64; 6],
        now: Instant,
        speed_rad_s: f64,
        max_step: Duration,
    ) -> ([f64; 6], bool) {
        let reach = if speed_rad_s.is_infinite() {
            f64::INFINITY
        } else {
            speed_rad_s * now.saturating_duration_since(self.at).min(max_step).as_secs_f64()
        };
        let gap = self
            .offset
            .unwrap_or_else(|| std::array::from_fn(|i| self.held[i] - targets[i]));
        let offset: [f64; 6] = std::array::from_fn(|i| gap[i] - gap[i].clamp(-reach, reach));
        self.offset = Some(offset);
        self.at = now;
        let goals = std::array::from_fn(|i| targets[i] + offset[i]);
        (goals, offset.iter().all(|o| *o == 0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gap_closes_at_the_speed_limit_and_a_pause_does_not_allow_a_jump() {
        let start = Instant::now();
        let mut ramp = Ramp::hold([0.0; 6], start);
        let period = Duration::from_millis(20);
        let target = [1.0, -1.0, 0.0, 0.005, 0.0, 0.5];
        // The first goals, computed at once, are the held pose.
        let (goals, done) = ramp.advance(&target, start, 0.5, period);
        assert_eq!((goals, done), ([0.0; 6], false));
        let (goals, _) = ramp.advance(&target, start + period, 0.5, period);
        assert!(
            (goals[0] - 0.01).abs() < 1e-12 && (goals[1] + 0.01).abs() < 1e-12,
            "{goals:?}"
        );
        assert_eq!(goals[3], 0.005, "a joint already close arrives at once");
        // A ten-second pause still moves only one period's worth.
        let (goals, _) = ramp.advance(&target, start + Duration::from_secs(10), 0.5, period);
        assert!((goals[0] - 0.02).abs() < 1e-12, "{goals:?}");
        // Moving targets are followed while the gap closes.
        let moved = target.map(|t| t + 0.1);
        let (goals, _) = ramp.advance(&moved, start + Duration::from_secs(10) + period, 0.5, period);
        assert!((goals[0] - 0.13).abs() < 1e-12, "{goals:?}");
        let mut now = start + Duration::from_secs(10) + period;
        let mut steps = 0;
        let mut done = false;
        while !done {
            now += period;
            (_, done) = ramp.advance(&moved, now, 0.5, period);
            steps += 1;
        }
        assert!(
            (96..=98).contains(&steps),
            "{steps}: 0.97 rad left at 0.01 rad per period"
        );
    }
}
