//! The shadow: beside the real arm, predicts per joint where the arm should be given the goals
//! commanded, compares with each reading, and finds obstructions (a joint held away from its
//! goal under load) and calibration drift (a steady offset at rest without load).
//!
//! The prediction is a first-order lag toward the goal with the servo's top speed as a rate
//! limit: a Feetech STS3215 position loop run with the bridge's profile settles a small step
//! within a few tens of milliseconds, and the twin's own actuator (kp 998 N·m/rad against
//! 3.3 N·m·s/rad of damping and gain, 2.94 N·m at most) is a lag of a few milliseconds that
//! saturates near 0.9 rad/s. The lag only has to be close enough for the residual to stay
//! below the threshold in free motion; an obstruction shows as a residual that persists under
//! load, which no tracking lag does. With no goals (torque off) the arm is passive and is
//! predicted to stay where it was last known, until it is seen to move.
//!
//! With a dynamics profile loaded ([`Shadow::identified`]) the hand-set lag gives way to a
//! rollout of the identified model ([`rollout`] says how and why), delay included.

mod rollout;

pub use rollout::ShadowModel;

use fakesim_arm::Joint;
use rollout::Rollout;
use std::time::{Duration, Instant};

/// Time constant of the predicted servo response.
pub const TIME_CONSTANT: Duration = Duration::from_millis(50);
/// Fastest the prediction moves (rad/s): the STS3215's no-load speed, 3400 steps/s.
pub const MAX_SPEED_RAD_S: f64 = 3400.0 * std::f64::consts::TAU / 4096.0;
/// Largest residual spread (rad) over the rest window for an offset to count as steady.
pub const REST_SPREAD_RAD: f64 = 0.005;
/// Readings a steady offset must last, at least, to count as drift.
pub const REST_READINGS: u32 = 20;
/// How long a steady offset must last, at least, to count as drift.
pub const REST_DURATION: Duration = Duration::from_millis(500);
/// Largest offset (rad) reported as drift; beyond it the arm is simply elsewhere.
pub const MAX_DRIFT_RAD: f64 = 0.3;
/// Longest gap between readings the prediction integrates over.
const MAX_GAP: Duration = Duration::from_millis(500);

/// The shadow's thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShadowConfig {
    /// A residual at least this large (rad) under load is a candidate obstruction.
    pub residual_rad: f64,
    /// Load (percent of full duty) at least this large backs an obstruction; below it the arm
    /// counts as unloaded for drift.
    pub load_percent: f64,
    /// Control ticks the residual and the load must last before the joint counts as blocked.
    pub ticks: u32,
    /// The smallest steady offset at rest (rad) reported as calibration drift.
    pub drift_rad: f64,
}

impl Default for ShadowConfig {
    /// 0.05 rad (about 33 servo steps) under 30 % load for 3 ticks; drift from 0.02 rad.
    fn default() -> Self {
        ShadowConfig {
            residual_rad: 0.05,
            load_percent: 30.0,
            ticks: 3,
            drift_rad: 0.02,
        }
    }
}

impl ShadowConfig {
    /// Names the first setting no shadow can run with.
    pub fn check(&self) -> Result<(), String> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !positive(self.residual_rad) {
            return Err(format!("shadow-residual={} must be above 0 rad", self.residual_rad));
        }
        if !(positive(self.load_percent) && self.load_percent <= 100.0) {
            return Err(format!("shadow-load={} must be in (0, 100] percent", self.load_percent));
        }
        if self.ticks == 0 {
            return Err("shadow-ticks must be at least 1".to_owned());
        }
        if !(positive(self.drift_rad) && self.drift_rad < MAX_DRIFT_RAD) {
            return Err(format!(
                "shadow-drift={} must be above 0 and below {MAX_DRIFT_RAD} rad",
                self.drift_rad
            ));
        }
        Ok(())
    }
}

/// One reading of the real arm, with the goals in force when it was taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShadowInput {
    /// When it was taken.
    pub at: Instant,
    /// Measured positions (rad, action-key order).
    pub measured: [f64; 6],
    /// Measured load per joint (signed percent of full duty).
    pub load_percent: [f64; 6],
    /// The goals the servos hold; `None` while torque is off (the arm is passive).
    pub goals: Option<[f64; 6]>,
}

/// One joint as the shadow sees it after a reading.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct JointResidual {
    /// Where the arm should be (rad).
    pub predicted_rad: f64,
    /// Measured minus predicted (rad).
    pub residual_rad: f64,
    /// Measured load (signed percent).
    pub load_percent: f64,
    /// The steady offset reported as calibration drift (rad), once found.
    pub drift_rad: Option<f64>,
}

/// What a reading revealed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Finding {
    /// A joint held away from its goal under load for the configured ticks.
    Obstructed {
        /// The joint.
        joint: Joint,
        /// Where it is held (rad).
        position_rad: f64,
        /// Measured minus predicted (rad).
        residual_rad: f64,
        /// Its load (signed percent).
        load_percent: f64,
    },
    /// A steady offset at rest without load: the calibration drifted (reported once).
    Drift {
        /// The joint.
        joint: Joint,
        /// Measured minus predicted (rad).
        offset_rad: f64,
    },
}

/// The residual of one joint over its recent readings.
#[derive(Debug, Clone, Copy, Default)]
struct Track {
    predicted: f64,
    /// The stretch of readings with the residual and load over the thresholds, if any.
    over: Option<Over>,
    /// Since when the arm rests with a steady residual.
    rest: Option<Rest>,
    /// The measured position the passive prediction was anchored with.
    anchor: f64,
    drift: Option<f64>,
}

/// A stretch of readings with the residual and the load over the thresholds.
#[derive(Debug, Clone, Copy)]
struct Over {
    since: Instant,
    readings: u32,
    /// Where the joint was measured at the stretch's first reading (rad).
    from: f64,
}

/// A stretch of readings with the prediction still and the residual steady, unloaded.
#[derive(Debug, Clone, Copy)]
struct Rest {
    since: Instant,
    readings: u32,
    residual: f64,
    predicted: f64,
}

/// The shadow of one arm.
#[derive(Debug)]
pub struct Shadow {
    config: ShadowConfig,
    /// How long the obstruction window lasts.
    window: Duration,
    tracks: [Track; 6],
    last_at: Option<Instant>,
    /// The identified model's rollout, with a dynamics profile loaded.
    rollout: Option<Box<Rollout>>,
}

impl Shadow {
    /// A shadow whose passive arm starts where the twin starts (`pose`); `period` is one
    /// control tick.
    pub fn new(config: ShadowConfig, period: Duration, pose: [f64; 6]) -> Self {
        let tracks = pose.map(|p| Track {
            predicted: p,
            anchor: f64::NAN,
            ..Track::default()
        });
        Shadow {
            config,
            window: period * config.ticks,
            tracks,
            last_at: None,
            rollout: None,
        }
    }

    /// The shadow predicting with the identified `model` (a rollout) instead of the hand-set
    /// lag; `None` keeps the lag.
    #[must_use]
    pub fn identified(mut self, model: Option<ShadowModel>) -> Self {
        self.rollout = model.map(|m| Box::new(Rollout::new(m)));
        self
    }

    /// The prediction restarts from `pose` (the arm was just held or placed there); windows
    /// restart, reported drift stays.
    pub fn rebase(&mut self, pose: [f64; 6]) {
        if let Some(rollout) = &mut self.rollout {
            rollout.stop();
        }
        for (track, p) in self.tracks.iter_mut().zip(pose) {
            *track = Track {
                predicted: p,
                anchor: p,
                drift: track.drift,
                ..Track::default()
            };
        }
    }

    /// Takes one reading: advances the prediction, updates the windows, and returns every
    /// joint's residual with what the reading revealed.
    pub fn observe(&mut self, input: &ShadowInput) -> ([JointResidual; 6], Vec<Finding>) {
        let dt = self.last_at.map_or(Duration::ZERO, |last| {
            input.at.saturating_duration_since(last).min(MAX_GAP)
        });
        let since = self.last_at.unwrap_or(input.at);
        self.last_at = Some(input.at);
        let rolled = match (&mut self.rollout, input.goals) {
            (Some(rollout), Some(goals)) => {
                let from = self.tracks.map(|t| t.predicted);
                Some(rollout.advance(since, goals, input.at, from))
            }
            (Some(rollout), None) => {
                rollout.stop();
                None
            }
            (None, _) => None,
        };
        let mut findings = Vec::new();
        let residuals = Joint::ALL.map(|joint| {
            let i = joint.index();
            let track = &mut self.tracks[i];
            let (measured, load) = (input.measured[i], input.load_percent[i]);
            match input.goals {
                Some(goals) => {
                    match rolled {
                        Some(pose) => track.predicted = pose[i],
                        None => predict(&mut track.predicted, goals[i], dt),
                    }
                    // Should torque go off, the passive arm is followed from where it is.
                    track.anchor = track.predicted;
                }
                None => follow_passive(track, measured),
            }
            let residual = measured - track.predicted;
            if let Some(finding) = self.judge(joint, input, residual, load) {
                findings.push(finding);
            }
            let track = &self.tracks[i];
            JointResidual {
                predicted_rad: track.predicted,
                residual_rad: residual,
                load_percent: load,
                drift_rad: track.drift,
            }
        });
        (residuals, findings)
    }

    /// Updates one joint's windows with its residual and load.
    fn judge(&mut self, joint: Joint, input: &ShadowInput, residual: f64, load: f64) -> Option<Finding> {
        let config = self.config;
        let window = self.window;
        let track = &mut self.tracks[joint.index()];
        let loaded = load.abs() >= config.load_percent;
        // The gripper squeezing an object is a grasp, not an obstruction.
        let pushing =
            input.goals.is_some() && joint != Joint::Gripper && loaded && residual.abs() >= config.residual_rad;
        let measured = input.measured[joint.index()];
        track.over = pushing.then(|| {
            let over = track.over.unwrap_or(Over {
                since: input.at,
                readings: 0,
                from: measured,
            });
            Over {
                readings: over.readings + 1,
                ..over
            }
        });
        if let Some(over) = track.over
            && over.readings >= 2
            && input.at.saturating_duration_since(over.since) >= window
        {
            // A blocked joint is held: over the window it gains less than the residual
            // threshold toward where it should be. A joint that lags the prediction while it
            // accelerates, or whose readings arrive late, gains more: its stretch starts again.
            let gained = (measured - over.from) * -residual.signum();
            if gained >= config.residual_rad {
                track.over = Some(Over {
                    since: input.at,
                    readings: 1,
                    from: measured,
                });
            } else {
                track.over = None;
                return Some(Finding::Obstructed {
                    joint,
                    position_rad: measured,
                    residual_rad: residual,
                    load_percent: load,
                });
            }
        }
        let predicted = track.predicted;
        track.rest = match track.rest {
            _ if loaded => None,
            Some(rest)
                if (residual - rest.residual).abs() <= REST_SPREAD_RAD
                    && (predicted - rest.predicted).abs() <= REST_SPREAD_RAD =>
            {
                Some(Rest {
                    readings: rest.readings + 1,
                    ..rest
                })
            }
            _ => Some(Rest {
                since: input.at,
                readings: 1,
                residual,
                predicted,
            }),
        };
        let rest = track.rest?;
        let at_rest = rest.readings >= REST_READINGS && input.at.saturating_duration_since(rest.since) >= REST_DURATION;
        let offset = rest.residual.abs();
        if track.drift.is_none() && at_rest && offset >= config.drift_rad && offset <= MAX_DRIFT_RAD {
            track.drift = Some(rest.residual);
            return Some(Finding::Drift {
                joint,
                offset_rad: rest.residual,
            });
        }
        None
    }
}

/// Moves the prediction toward `goal` over `dt`: a first-order lag, rate-limited.
fn predict(predicted: &mut f64, goal: f64, dt: Duration) {
    let share = 1.0 - (-dt.as_secs_f64() / TIME_CONSTANT.as_secs_f64()).exp();
    let most = MAX_SPEED_RAD_S * dt.as_secs_f64();
    *predicted += ((goal - *predicted) * share).clamp(-most, most);
}

/// A passive arm stays where it was predicted (at first, the twin's starting pose) until it
/// is seen to move; from then on the prediction follows what is measured.
fn follow_passive(track: &mut Track, measured: f64) {
    if track.anchor.is_nan() {
        track.anchor = measured;
    }
    if (measured - track.anchor).abs() > REST_SPREAD_RAD || track.anchor == track.predicted {
        track.predicted = measured;
        track.anchor = measured;
    }
}

#[cfg(test)]
mod tests;
