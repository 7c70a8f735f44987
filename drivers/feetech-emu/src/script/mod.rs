//! A hand moving the arm by a script: where it holds each joint at every moment (a sweep, timed
//! waypoints or a recorded LeRobot episode), and pushes against a joint over a time window.
//!
//! Positions are present positions in encoder steps (after the homing offset), fractional so
//! that motion between two waypoints or frames is smooth. A servo with torque off follows the
//! hand; with torque on it keeps to its goal and the hand shows as load (see `servo.rs`).

mod args;
mod dataset;
pub(crate) mod push;
mod units;
mod waypoints;

pub use args::{PushArg, ScriptArgs, ScriptSource};
pub use push::Push;
pub use units::ScriptUnits;

use std::time::Duration;

use feetech::calibration::Calibration;

/// Why a script could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The operating-system error.
        source: std::io::Error,
    },
    /// A waypoint file is not what it should be.
    #[error("{path} line {line}: {reason}")]
    Waypoints {
        /// The file.
        path: String,
        /// One-based line number.
        line: usize,
        /// What is wrong there.
        reason: String,
    },
    /// A LeRobot dataset could not be replayed.
    #[error("dataset {path}: {reason}")]
    Dataset {
        /// The dataset root or one of its files.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A script names a joint the arm's calibration does not have.
    #[error("the script names `{0}`, which is not a joint of the arm")]
    UnknownJoint(String),
    /// A value of the script is out of range.
    #[error("{0}")]
    Invalid(String),
}

/// Where a hand holds the joints over time, from the moment the script starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    paths: Paths,
    looped: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Paths {
    Sweep(Vec<SweepJoint>),
    Track(Track),
}

/// One joint of a sweep: a sine about the middle of its calibrated range.
#[derive(Debug, Clone, PartialEq)]
struct SweepJoint {
    id: u8,
    middle: f64,
    amplitude: f64,
    /// Peak speed in steps per second.
    speed: f64,
}

/// Positions at given times, linearly interpolated, for the servos in `ids` (one column each).
#[derive(Debug, Clone, PartialEq)]
struct Track {
    ids: Vec<u8>,
    times_s: Vec<f64>,
    frames: Vec<Vec<f64>>,
}

/// The time step used to derive a velocity from two positions.
const VELOCITY_STEP: Duration = Duration::from_millis(1);

impl Script {
    /// Every joint of `calibration` swept through `share` (0..=1) of its calibrated range about
    /// the middle, starting there and going up, at a peak speed of `degrees_per_s`.
    pub fn sweep(calibration: &Calibration, share: f64, degrees_per_s: f64) -> Result<Self, ScriptError> {
        if !(share > 0.0 && share <= 1.0) {
            return Err(ScriptError::Invalid(format!(
                "the sweep share {share} is not in (0, 1]"
            )));
        }
        if !(degrees_per_s > 0.0 && degrees_per_s <= MAX_HAND_DEGREES_PER_S) {
            return Err(ScriptError::Invalid(format!(
                "the sweep speed {degrees_per_s} deg/s is not in (0, {MAX_HAND_DEGREES_PER_S}]"
            )));
        }
        let speed = degrees_per_s * STEPS_PER_DEGREE;
        let joints = calibration
            .by_id()
            .into_iter()
            .map(|(_, motor)| {
                let (min, max) = (f64::from(motor.range_min), f64::from(motor.range_max));
                SweepJoint {
                    id: motor.id,
                    middle: (min + max) / 2.0,
                    amplitude: share * (max - min) / 2.0,
                    speed,
                }
            })
            .filter(|joint| joint.amplitude > 0.0)
            .collect();
        Ok(Self {
            paths: Paths::Sweep(joints),
            looped: true,
        })
    }

    /// A track through `frames` (one position per servo of `ids`) at `times_s`, which must be
    /// increasing; `looped` starts it over after the last frame.
    fn track(ids: Vec<u8>, times_s: Vec<f64>, frames: Vec<Vec<f64>>, looped: bool) -> Self {
        Self {
            paths: Paths::Track(Track { ids, times_s, frames }),
            looped,
        }
    }

    /// Starts the script over at its end (a sweep always does).
    pub fn looped(mut self, looped: bool) -> Self {
        if let Paths::Track(_) = self.paths {
            self.looped = looped;
        }
        self
    }

    /// Whether the script starts over at its end.
    pub fn is_looped(&self) -> bool {
        self.looped
    }

    /// Ids of the servos the script moves.
    pub fn ids(&self) -> Vec<u8> {
        match &self.paths {
            Paths::Sweep(joints) => joints.iter().map(|j| j.id).collect(),
            Paths::Track(track) => track.ids.clone(),
        }
    }

    /// How long one pass lasts (a sweep: the period of its slowest joint).
    pub fn duration(&self) -> Duration {
        let seconds = match &self.paths {
            Paths::Sweep(joints) => joints
                .iter()
                .map(|j| std::f64::consts::TAU * j.amplitude / j.speed)
                .fold(0.0, f64::max),
            Paths::Track(track) => track.times_s.last().copied().unwrap_or(0.0),
        };
        Duration::try_from_secs_f64(seconds).unwrap_or_default()
    }

    /// Present position (steps) the hand holds servo `id` at, `at` after the script started;
    /// `None` for a servo the script does not move.
    pub fn position(&self, id: u8, at: Duration) -> Option<f64> {
        let t = at.as_secs_f64();
        match &self.paths {
            Paths::Sweep(joints) => {
                let joint = joints.iter().find(|j| j.id == id)?;
                Some(joint.middle + joint.amplitude * (t * joint.speed / joint.amplitude).sin())
            }
            Paths::Track(track) => {
                let column = track.ids.iter().position(|i| *i == id)?;
                Some(track.at(column, self.wrapped(t)))
            }
        }
    }

    /// Present position and velocity (steps/s) of servo `id` at `at`.
    pub(crate) fn motion(&self, id: u8, at: Duration) -> Option<(f64, f64)> {
        let now = self.position(id, at)?;
        let (before, after) = match at.checked_sub(VELOCITY_STEP) {
            Some(earlier) => (self.position(id, earlier)?, now),
            None => (now, self.position(id, at + VELOCITY_STEP)?),
        };
        Some((now, (after - before) / VELOCITY_STEP.as_secs_f64()))
    }

    /// The track's time for `t` seconds after the start: looped, or held at the end.
    fn wrapped(&self, t: f64) -> f64 {
        let period = self.duration().as_secs_f64();
        if self.looped && period > 0.0 {
            t.rem_euclid(period)
        } else {
            t
        }
    }
}

impl Track {
    /// Column `column` at `t` seconds: linear between frames, the first before it, the last after.
    fn at(&self, column: usize, t: f64) -> f64 {
        let value = |frame: usize| {
            self.frames
                .get(frame)
                .and_then(|f| f.get(column))
                .copied()
                .unwrap_or(0.0)
        };
        let next = self.times_s.partition_point(|time| *time <= t);
        if next == 0 {
            return value(0);
        }
        if next >= self.times_s.len() {
            return value(self.times_s.len() - 1);
        }
        let (t0, t1) = (self.times_s[next - 1], self.times_s[next]);
        let share = (t - t0) / (t1 - t0);
        value(next - 1) + share * (value(next) - value(next - 1))
    }
}

/// Encoder steps per degree.
const STEPS_PER_DEGREE: f64 = 4096.0 / 360.0;

/// Fastest a scripted hand moves a joint, degrees per second (about the servo's top speed).
pub const MAX_HAND_DEGREES_PER_S: f64 = 300.0;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::VirtualSo101;

    #[test]
    fn a_sweep_stays_inside_its_share_of_each_range_at_the_given_speed() {
        let calibration = VirtualSo101::calibration();
        let script = Script::sweep(&calibration, 0.5, 45.0).unwrap();
        assert_eq!(script.ids(), [1, 2, 3, 4, 5, 6]);
        for (_, motor) in calibration.by_id() {
            let (min, max) = (f64::from(motor.range_min), f64::from(motor.range_max));
            let (middle, quarter) = ((min + max) / 2.0, (max - min) / 4.0);
            let mut highest = f64::MIN;
            let mut lowest = f64::MAX;
            let mut fastest: f64 = 0.0;
            for ms in (0..20_000).step_by(5) {
                let (at, speed) = script.motion(motor.id, Duration::from_millis(ms)).unwrap();
                highest = highest.max(at);
                lowest = lowest.min(at);
                fastest = fastest.max(speed.abs());
            }
            assert!((highest - (middle + quarter)).abs() < 1.0, "{highest}");
            assert!((lowest - (middle - quarter)).abs() < 1.0, "{lowest}");
            assert!((fastest - 45.0 * STEPS_PER_DEGREE).abs() < 1.0, "{fastest}");
            assert_eq!(script.position(motor.id, Duration::ZERO), Some(middle));
        }
        assert!(Script::sweep(&calibration, 0.0, 45.0).is_err());
        assert!(Script::sweep(&calibration, 0.5, 1000.0).is_err());
    }

    #[test]
    fn a_track_interpolates_holds_at_its_end_or_loops() {
        let track = Script::track(
            vec![3],
            vec![0.0, 1.0, 3.0],
            vec![vec![100.0], vec![200.0], vec![0.0]],
            false,
        );
        let at = |script: &Script, s: f64| script.position(3, Duration::from_secs_f64(s)).unwrap();
        assert_eq!(at(&track, 0.5), 150.0);
        assert_eq!(at(&track, 2.0), 100.0);
        assert_eq!(at(&track, 10.0), 0.0);
        assert_eq!(track.position(4, Duration::ZERO), None);
        let looped = track.looped(true);
        assert_eq!(at(&looped, 3.5), 150.0);
        let (_, speed) = looped.motion(3, Duration::from_millis(500)).unwrap();
        assert!((speed - 100.0).abs() < 1e-6, "{speed}");
    }
}
