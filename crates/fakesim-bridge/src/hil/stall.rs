//! The stall guard: a joint that stays under load while held away from its goal for longer than
//! its window has its torque switched off, and the stop latches. It protects a servo the
//! shadow's hold did not relieve (a client pushing into an obstacle tick after tick, a gripper
//! squeezing an object).

use fakesim_arm::Joint;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// When one joint counts as stalled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct StallLimit {
    /// Load (percent of full duty, either sign) at or above which the joint strains.
    pub load_percent: f64,
    /// Distance from its goal (rad) at or above which a straining joint is stalled.
    pub error_rad: f64,
    /// How long both must last (seconds) before torque goes off.
    pub window_s: f64,
}

impl StallLimit {
    /// 70 % load 0.1 rad from the goal for 2 s: an arm joint pushing against something.
    pub const ARM: StallLimit = StallLimit {
        load_percent: 70.0,
        error_rad: 0.1,
        window_s: 2.0,
    };
    /// 40 % load 0.1 rad from the goal for 1.5 s: the gripper squeezes at half torque at most.
    pub const GRIPPER: StallLimit = StallLimit {
        load_percent: 40.0,
        error_rad: 0.1,
        window_s: 1.5,
    };

    fn check(&self, joint: Joint) -> Result<(), String> {
        let positive = |v: f64| v.is_finite() && v > 0.0;
        if !(positive(self.load_percent) && self.load_percent <= 100.0) {
            return Err(format!(
                "stall.{joint}.load-percent={} must be above 0 and at most 100",
                self.load_percent
            ));
        }
        if !positive(self.error_rad) {
            return Err(format!(
                "stall.{joint}.error-rad={} must be above 0 rad",
                self.error_rad
            ));
        }
        if !(positive(self.window_s) && self.window_s <= 60.0) {
            return Err(format!(
                "stall.{joint}.window-s={} must be above 0 and at most 60 s",
                self.window_s
            ));
        }
        Ok(())
    }
}

/// The stall guard's limits per joint, by label (`[stall.gripper]` in the config file).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[allow(missing_docs)]
pub struct StallConfig {
    pub shoulder_pan: StallLimit,
    pub shoulder_lift: StallLimit,
    pub elbow_flex: StallLimit,
    pub wrist_flex: StallLimit,
    pub wrist_roll: StallLimit,
    pub gripper: StallLimit,
}

impl Default for StallConfig {
    /// [`StallLimit::ARM`] for the five arm joints, [`StallLimit::GRIPPER`] for the gripper.
    fn default() -> Self {
        StallConfig {
            shoulder_pan: StallLimit::ARM,
            shoulder_lift: StallLimit::ARM,
            elbow_flex: StallLimit::ARM,
            wrist_flex: StallLimit::ARM,
            wrist_roll: StallLimit::ARM,
            gripper: StallLimit::GRIPPER,
        }
    }
}

impl StallConfig {
    /// The limit of `joint`.
    pub fn limit(&self, joint: Joint) -> StallLimit {
        [
            self.shoulder_pan,
            self.shoulder_lift,
            self.elbow_flex,
            self.wrist_flex,
            self.wrist_roll,
            self.gripper,
        ][joint.index()]
    }

    /// Names the first limit no guard can run with.
    pub fn check(&self) -> Result<(), String> {
        Joint::ALL
            .into_iter()
            .try_for_each(|joint| self.limit(joint).check(joint))
    }
}

/// A joint found stalled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stalled {
    /// The joint.
    pub joint: Joint,
    /// Its load at the end (signed percent).
    pub load_percent: f64,
    /// Goal minus measured (rad) at the end.
    pub error_rad: f64,
    /// How long it strained.
    pub lasted: Duration,
}

/// Watches every joint's load and distance from its goal, reading by reading.
#[derive(Debug, Clone)]
pub struct StallGuard {
    config: StallConfig,
    since: [Option<Instant>; 6],
}

impl StallGuard {
    /// A guard that has seen nothing yet.
    pub fn new(config: StallConfig) -> Self {
        Self {
            config,
            since: [None; 6],
        }
    }

    /// Forgets what it saw (torque went off or on, the arm was held).
    pub fn rebase(&mut self) {
        self.since = [None; 6];
    }

    /// Takes one reading at `at`: the joints that strained for their whole window now (each
    /// reported once, then watched afresh).
    pub fn observe(
        &mut self,
        at: Instant,
        load_percent: [f64; 6],
        goals: [f64; 6],
        measured: [f64; 6],
    ) -> Vec<Stalled> {
        let mut stalled = Vec::new();
        for joint in Joint::ALL {
            let i = joint.index();
            let limit = self.config.limit(joint);
            let error_rad = goals[i] - measured[i];
            let straining = load_percent[i].abs() >= limit.load_percent && error_rad.abs() >= limit.error_rad;
            if !straining {
                self.since[i] = None;
                continue;
            }
            let since = *self.since[i].get_or_insert(at);
            let lasted = at.saturating_duration_since(since);
            if lasted.as_secs_f64() >= limit.window_s {
                self.since[i] = None;
                stalled.push(Stalled {
                    joint,
                    load_percent: load_percent[i],
                    error_rad,
                    lasted,
                });
            }
        }
        stalled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOALS: [f64; 6] = [0.0; 6];

    fn at(start: Instant, ms: u64) -> Instant {
        start + Duration::from_millis(ms)
    }

    #[test]
    fn a_joint_straining_for_its_window_is_stalled_once() {
        let mut guard = StallGuard::new(StallConfig::default());
        let start = Instant::now();
        let mut measured = GOALS;
        measured[2] = -0.3;
        let load = [0.0, 0.0, 85.0, 0.0, 0.0, 0.0];
        assert!(guard.observe(at(start, 0), load, GOALS, measured).is_empty());
        assert!(guard.observe(at(start, 1_900), load, GOALS, measured).is_empty());
        let stalled = guard.observe(at(start, 2_000), load, GOALS, measured);
        assert_eq!(stalled.len(), 1);
        assert_eq!(stalled[0].joint, Joint::ElbowFlex);
        assert!((stalled[0].error_rad - 0.3).abs() < 1e-12);
        assert!(
            guard.observe(at(start, 2_050), load, GOALS, measured).is_empty(),
            "watched afresh"
        );
    }

    #[test]
    fn a_break_in_the_strain_starts_the_window_again() {
        let mut guard = StallGuard::new(StallConfig::default());
        let start = Instant::now();
        let mut measured = GOALS;
        measured[5] = 0.4;
        let squeeze = [0.0, 0.0, 0.0, 0.0, 0.0, -45.0];
        guard.observe(at(start, 0), squeeze, GOALS, measured);
        guard.observe(at(start, 1_000), [0.0; 6], GOALS, measured);
        assert!(guard.observe(at(start, 1_600), squeeze, GOALS, measured).is_empty());
        let stalled = guard.observe(at(start, 3_100), squeeze, GOALS, measured);
        assert_eq!(stalled.iter().map(|s| s.joint).collect::<Vec<_>>(), [Joint::Gripper]);
    }

    #[test]
    fn load_alone_or_distance_alone_is_no_stall() {
        let mut guard = StallGuard::new(StallConfig::default());
        let start = Instant::now();
        let far = [0.5; 6];
        assert!(guard.observe(at(start, 0), [10.0; 6], GOALS, far).is_empty());
        assert!(guard.observe(at(start, 10_000), [10.0; 6], GOALS, far).is_empty());
        assert!(guard.observe(at(start, 20_000), [95.0; 6], GOALS, GOALS).is_empty());
        assert!(guard.observe(at(start, 30_000), [95.0; 6], GOALS, GOALS).is_empty());
    }

    #[test]
    fn the_gripper_is_watched_more_tightly_and_limits_are_checked() {
        let config = StallConfig::default();
        assert!(config.limit(Joint::Gripper).load_percent < config.limit(Joint::WristRoll).load_percent);
        assert!(config.check().is_ok());
        let broken = StallConfig {
            wrist_flex: StallLimit {
                window_s: f64::NAN,
                ..StallLimit::ARM
            },
            ..config
        };
        assert!(broken.check().unwrap_err().starts_with("stall.wrist_flex.window-s"));
    }
}
