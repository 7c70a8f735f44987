//! What the world does to a servo's shaft: an obstacle it cannot pass, and gearing that slips
//! back under load.

use crate::config::ServoConfig;
use crate::motion::{Drive, Motion};

/// Load (0.1 % units) per step the goal lies past an obstacle the shaft rests against (model
/// assumption: the position loop reaches full load 100 steps, about 9°, past it).
pub const LOAD_PER_BLOCKED_STEP: f64 = 10.0;

/// Distance (steps) from the obstacle at which the shaft counts as resting against it.
const TOUCH_STEPS: f64 = 0.5;

/// The obstacle and the slip of one servo, and whether it is pushing against the obstacle.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hindrance {
    /// Present position of the obstacle and the side the shaft lives on (+1 above, -1 below).
    obstacle: Option<(f64, f64)>,
    /// Steps per second the shaft slips back at full load.
    slip_steps_per_s: f64,
    /// Signed steps the goal lies past the obstacle while the shaft rests against it; 0 when free.
    pushing: f64,
}

impl Hindrance {
    /// The configured hindrance of a shaft resting at `present`.
    pub(crate) fn new(config: &ServoConfig, present: f64) -> Self {
        let mut hindrance = Hindrance {
            obstacle: config.obstacle.map(|at| (f64::from(at), 1.0)),
            slip_steps_per_s: config.slip_steps_per_s.max(0.0),
            pushing: 0.0,
        };
        hindrance.rest_at(present);
        hindrance
    }

    /// The shaft was put at `present` (by hand or at power-on): it lives on that side of the
    /// obstacle from now on (at the obstacle: above it).
    pub(crate) fn rest_at(&mut self, present: f64) {
        if let Some((at, side)) = &mut self.obstacle {
            *side = if present >= *at { 1.0 } else { -1.0 };
        }
        self.pushing = 0.0;
    }

    /// After a motion step: stops a shaft that crossed the obstacle at the obstacle, and notes
    /// how far past it the goal lies while it rests there.
    pub(crate) fn constrain(&mut self, motion: &mut Motion, drive: Option<&Drive>) {
        self.pushing = 0.0;
        let (Some((at, side)), Some(drive)) = (self.obstacle, drive) else {
            return;
        };
        if (motion.present(drive.offset) - at) * side < 0.0 {
            motion.place(at + drive.offset);
        }
        let past = drive.goal - at;
        if past * side < 0.0 && (motion.present(drive.offset) - at).abs() < TOUCH_STEPS {
            self.pushing = past;
        }
    }

    /// Whether there is an obstacle or a slip at all.
    pub(crate) fn is_active(&self) -> bool {
        self.obstacle.is_some() || self.slip_steps_per_s > 0.0
    }

    /// Signed steps the goal lies past the obstacle while the shaft pushes against it.
    pub(crate) fn pushing(&self) -> f64 {
        self.pushing
    }

    /// Slips the shaft back against a signed `load_share` (-1..=1 of full load) for `dt_s`.
    pub(crate) fn slip(&self, motion: &mut Motion, load_share: f64, dt_s: f64) {
        if self.slip_steps_per_s > 0.0 && load_share != 0.0 {
            motion.shift(-load_share.clamp(-1.0, 1.0) * self.slip_steps_per_s * dt_s);
        }
    }
}
