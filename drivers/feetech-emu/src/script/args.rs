//! Command-line options of the scripted hand, shared by the `feetech-emu` binary and
//! `fakesim-hil emulate`.

use std::path::PathBuf;
use std::time::Duration;

use feetech::calibration::Calibration;
use feetech::units::degrees_to_steps;

use super::{Push, Script, ScriptError, ScriptUnits, dataset, waypoints};
use crate::cli::parse_window;
use crate::config::EmuConfig;
use crate::so101::JointOffset;

/// What moves the arm while torque is off.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptSource {
    /// Every joint swept about the middle of its range.
    Sweep,
    /// Timed waypoints from a CSV file.
    Waypoints(PathBuf),
    /// The actions of one episode of a LeRobotDataset (its root directory).
    Dataset(PathBuf),
}

impl ScriptSource {
    /// Parses `sweep`, a directory (a dataset) or a file (waypoints).
    pub fn parse(text: &str) -> Result<Self, String> {
        if text == "sweep" {
            return Ok(Self::Sweep);
        }
        let path = PathBuf::from(text);
        if path.is_dir() {
            Ok(Self::Dataset(path))
        } else if path.is_file() {
            Ok(Self::Waypoints(path))
        } else {
            Err(format!(
                "`{text}` is neither `sweep`, a waypoint file nor a dataset directory"
            ))
        }
    }
}

/// A push given as `LABEL=DEG@START..END` (degrees off where the joint stood, seconds of bus time).
#[derive(Debug, Clone, PartialEq)]
pub struct PushArg {
    /// The joint and the degrees.
    pub offset: JointOffset,
    /// Start, seconds after the bus started.
    pub from: Duration,
    /// End.
    pub until: Duration,
}

impl PushArg {
    /// Parses `LABEL=DEG@START..END`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (offset, window) = text
            .split_once('@')
            .ok_or_else(|| format!("`{text}` is not LABEL=DEG@START..END"))?;
        let offset = JointOffset::parse(offset)?;
        let (from, until) = parse_window(window).map_err(|reason| format!("`{text}`: {reason}"))?;
        let until = until.ok_or_else(|| format!("`{text}`: a push needs an end, START..END"))?;
        Ok(Self { offset, from, until })
    }
}

/// How a hand moves the virtual arm.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Hand")]
pub struct ScriptArgs {
    /// Move the servos as a hand moves a passive arm, while torque is off (with torque on the
    /// goals win and the hand shows as load): `sweep`, a waypoint file (CSV: `time_s,LABEL,...`)
    /// or a LeRobotDataset directory, whose `action` column is replayed at its fps.
    #[arg(long, value_name = "sweep|FILE|DATASET", value_parser = ScriptSource::parse)]
    pub script: Option<ScriptSource>,
    /// Share (0..1] of each joint's calibrated range the sweep covers, about its middle.
    #[arg(long, value_name = "SHARE", default_value_t = 0.5)]
    pub sweep_share: f64,
    /// Peak speed of the sweep, degrees per second.
    #[arg(long, value_name = "DEG_PER_S", default_value_t = 30.0)]
    pub sweep_speed: f64,
    /// Units of the waypoints or of the dataset's actions: LeRobot's degrees (joints 1-5 in
    /// degrees about the middle of the range) or its range (-100..100); the gripper is 0..100.
    #[arg(long, value_enum, default_value_t)]
    pub script_units: ScriptUnits,
    /// The dataset episode to replay.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub episode: u64,
    /// Start the waypoints or the episode over after the last one (a sweep always repeats).
    #[arg(long)]
    pub script_loop: bool,
    /// A hand pushing a joint DEG degrees off where it stands, from START until END seconds
    /// after the bus started, harder than the servo holds (repeatable).
    #[arg(long = "push", value_name = "LABEL=DEG@START..END", value_parser = PushArg::parse)]
    pub pushes: Vec<PushArg>,
}

impl ScriptArgs {
    /// The script for the arm holding `calibration`, if one was asked for.
    pub fn script(&self, calibration: &Calibration) -> Result<Option<Script>, ScriptError> {
        let script = match &self.script {
            None => return Ok(None),
            Some(ScriptSource::Sweep) => Script::sweep(calibration, self.sweep_share, self.sweep_speed)?,
            Some(ScriptSource::Waypoints(path)) => waypoints::load(path, calibration, self.script_units)?,
            Some(ScriptSource::Dataset(root)) => dataset::load(root, self.episode, calibration, self.script_units)?,
        };
        Ok(Some(script.looped(self.script_loop)))
    }

    /// Whether any option asks for a hand.
    pub fn is_set(&self) -> bool {
        self.script.is_some() || !self.pushes.is_empty()
    }

    /// `config` with the hand these options ask for, on the arm holding `calibration`.
    pub fn apply(&self, calibration: &Calibration, config: EmuConfig) -> Result<EmuConfig, ScriptError> {
        Ok(EmuConfig {
            script: self.script(calibration)?,
            pushes: self.pushes(calibration)?,
            ..config
        })
    }

    /// What the hand moving by `script` (built from these options) does, in a sentence.
    pub fn describe(&self, script: &Script) -> String {
        let what = match &self.script {
            Some(ScriptSource::Waypoints(path)) => format!("follows the waypoints of {}", path.display()),
            Some(ScriptSource::Dataset(root)) => {
                format!("replays the actions of episode {} of {}", self.episode, root.display())
            }
            _ => format!(
                "sweeps every joint through {:.0} % of its range at up to {} deg/s",
                self.sweep_share * 100.0,
                self.sweep_speed
            ),
        };
        let then = if script.is_looped() {
            "repeating"
        } else {
            "then holding still"
        };
        format!(
            "A hand {what} ({:.1} s a pass, {then}): with torque off the servos follow it, with torque on their goals win.",
            script.duration().as_secs_f64()
        )
    }

    /// The pushes, on the servos of `calibration`.
    pub fn pushes(&self, calibration: &Calibration) -> Result<Vec<Push>, ScriptError> {
        self.pushes
            .iter()
            .map(|push| {
                let label = &push.offset.label;
                let motor = calibration
                    .motors
                    .get(label)
                    .ok_or_else(|| ScriptError::UnknownJoint(label.clone()))?;
                Ok(Push {
                    id: motor.id,
                    steps: f64::from(degrees_to_steps(push.offset.degrees)),
                    from: push.from,
                    until: push.until,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn pushes_and_sources_parse_and_refuse_nonsense() {
        let push = PushArg::parse("elbow_flex=-10@2..3.5").unwrap();
        assert_eq!(push.offset.label, "elbow_flex");
        assert_eq!(push.offset.degrees, -10.0);
        assert_eq!(
            (push.from, push.until),
            (Duration::from_secs(2), Duration::from_millis(3500))
        );
        for bad in ["elbow_flex=10", "elbow_flex=10@2", "elbow_flex=10@3..2", "elbow=x@1..2"] {
            assert!(PushArg::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(ScriptSource::parse("sweep").unwrap(), ScriptSource::Sweep);
        assert!(ScriptSource::parse("/no/such/file").is_err());
        let args = ScriptArgs {
            pushes: vec![push, PushArg::parse("knee=1@0..1").unwrap()],
            ..ScriptArgs::default()
        };
        assert!(matches!(
            args.pushes(&crate::VirtualSo101::calibration()),
            Err(ScriptError::UnknownJoint(label)) if label == "knee"
        ));
        assert!(args.script(&crate::VirtualSo101::calibration()).unwrap().is_none());
    }
}
