//! Command-line options of the emulated arm, its hand and fault injection, shared by the
//! `feetech-emu` binary and `fakesim-hil emulate`.

use std::path::PathBuf;
use std::time::Duration;

use feetech::calibration::Calibration;
use feetech::protocol::status::ServoError;

use crate::arms::VirtualArm;
use crate::config::ServoConfig;
use crate::error::EmuError;
use crate::faults::{FaultConfig, FaultWindow, SilenceWindow};
use crate::so101::{JointOffset, JointSlip, VirtualSo101};

pub use crate::script::ScriptArgs;
pub use crate::timeline::{PlugArgs, ResetAt, UnplugAt};

/// Which arm the virtual bus emulates.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Arm")]
pub struct ArmArgs {
    /// The arm whose calibration the servos hold: an SO-101 or an SO-100 (the same six
    /// STS3215 servos, other ranges), unless --calibration gives one.
    #[arg(long = "arm", value_enum, default_value_t, value_name = "ARM")]
    pub kind: VirtualArm,
    /// Emulate an arm whose servos hold this LeRobot calibration file (EEPROM homing
    /// offsets and limits), resting at the middle of each calibrated range.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Shift a joint's mechanical zero by DEG degrees against the model's (repeatable):
    /// every reading of that servo is DEG degrees off.
    #[arg(long = "joint-offset", value_name = "LABEL=DEG", value_parser = JointOffset::parse)]
    pub joint_offsets: Vec<JointOffset>,
    /// An obstacle the joint cannot pass, DEG degrees from the middle of its calibrated range
    /// (the model's angle for joints 1-5) (repeatable): driven against it, the servo stops
    /// there and its present load rises.
    #[arg(long = "obstacle", value_name = "LABEL=DEG", value_parser = JointOffset::parse)]
    pub obstacles: Vec<JointOffset>,
    /// Gearing that loses steps under load (repeatable): at full load the joint slips back
    /// STEPS_PER_S steps per second against the load, which the servo then makes up again.
    #[arg(long = "lose-steps", value_name = "LABEL=STEPS_PER_S", value_parser = JointSlip::parse)]
    pub lose_steps: Vec<JointSlip>,
}

impl ArmArgs {
    /// The calibration the virtual arm holds: the file's, or the built-in arm's.
    pub fn calibration(&self) -> Result<Calibration, EmuError> {
        match &self.calibration {
            Some(path) => Ok(Calibration::load(path)?),
            None => Ok(self.kind.calibration()),
        }
    }

    /// Whether any option asks for something other than the built-in SO-101 as it stands.
    pub fn is_custom(&self) -> bool {
        self.kind != VirtualArm::So101
            || self.calibration.is_some()
            || !self.joint_offsets.is_empty()
            || !self.obstacles.is_empty()
            || !self.lose_steps.is_empty()
    }

    /// The six servos of the arm, with their obstacles and slips.
    pub fn servos(&self) -> Result<Vec<ServoConfig>, EmuError> {
        let calibration = self.calibration()?;
        let mut servos = VirtualSo101::holding(&calibration, &self.joint_offsets)?;
        VirtualSo101::hinder(
            &mut servos,
            &calibration,
            &self.joint_offsets,
            &self.obstacles,
            &self.lose_steps,
        )?;
        Ok(servos)
    }
}

/// Faults the virtual bus injects from the start.
#[derive(Debug, Clone, Default, clap::Args)]
#[command(next_help_heading = "Faults")]
pub struct FaultArgs {
    /// Probability (0..1) that a reply is sent with a corrupted checksum.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = parse_probability)]
    pub corrupt_checksum: f64,
    /// Probability (0..1) that a reply is not sent.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = parse_probability)]
    pub drop_reply: f64,
    /// A servo that neither executes nor answers (repeatable; same form as --overload):
    /// `ID` for good, `ID@S..E` from S until E seconds after start, as in a brown-out.
    #[arg(long = "silent", value_name = "ID[@S[..E]]", value_parser = FaultTime::parse)]
    pub silent: Vec<FaultTime>,
    /// A servo reporting an overload error (repeatable): `ID` from the start, `ID@S`
    /// from S seconds after start, `ID@S..E` from S until E seconds.
    #[arg(long = "overload", value_name = "ID[@S[..E]]", value_parser = FaultTime::parse)]
    pub overload: Vec<FaultTime>,
    /// A servo reporting an overheat error (repeatable; same form as --overload).
    #[arg(long = "overheat", value_name = "ID[@S[..E]]", value_parser = FaultTime::parse)]
    pub overheat: Vec<FaultTime>,
    /// A servo reporting an input voltage error (repeatable; same form as --overload).
    #[arg(long = "voltage-error", value_name = "ID[@S[..E]]", value_parser = FaultTime::parse)]
    pub voltage_error: Vec<FaultTime>,
    /// A servo resets at S seconds after start (repeatable): its RAM returns to the power-on
    /// values (torque off, Lock 1, goal = present position), as in a brown-out the adapter
    /// survives.
    #[arg(long = "reset-at", value_name = "ID@S", value_parser = ResetAt::parse)]
    pub reset_at: Vec<ResetAt>,
    /// A servo that locks up when it has an overload (repeatable; give it one with
    /// --overload): from then on it neither executes nor answers until its power is cycled.
    #[arg(long = "lockup-after-overload", value_name = "ID")]
    pub lockup_after_overload: Vec<u8>,
    /// Echo every received byte back, as some adapters do.
    #[arg(long)]
    pub echo: bool,
    /// Seed of the random faults.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
}

/// A servo and the time window of its fault, as given on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultTime {
    /// Servo id.
    pub id: u8,
    /// Start, since the bus started.
    pub from: Duration,
    /// End; `None` never.
    pub until: Option<Duration>,
}

impl FaultTime {
    /// Parses `ID`, `ID@S` or `ID@S..E` (seconds, fractions allowed).
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("`{text}` is not ID, ID@SECONDS or ID@START..END");
        let (id, window) = text.split_once('@').map_or((text, None), |(id, w)| (id, Some(w)));
        let id = id.trim().parse::<u8>().map_err(|_| bad())?;
        let (from, until) = match window {
            None => (Duration::ZERO, None),
            Some(window) => parse_window(window).map_err(|reason| format!("`{text}`: {reason}"))?,
        };
        Ok(Self { id, from, until })
    }
}

/// Parses a time window `S` (from S seconds on) or `S..E` (from S until E seconds, E after S).
pub fn parse_window(text: &str) -> Result<(Duration, Option<Duration>), String> {
    let seconds = |s: &str| {
        s.trim()
            .parse::<f64>()
            .ok()
            .and_then(|v| Duration::try_from_secs_f64(v).ok())
            .ok_or_else(|| format!("`{s}` is not a number of seconds"))
    };
    match text.split_once("..") {
        None => Ok((seconds(text)?, None)),
        Some((from, until)) => {
            let (from, until) = (seconds(from)?, seconds(until)?);
            if until <= from {
                return Err("the window must end after it starts".to_owned());
            }
            Ok((from, Some(until)))
        }
    }
}

/// Parses a probability in 0..=1.
pub fn parse_probability(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|p| (0.0..=1.0).contains(p))
        .ok_or_else(|| format!("`{text}` is not a probability between 0 and 1"))
}

impl FaultArgs {
    /// The emulator's fault settings (the seed goes to `EmuConfig::seed`).
    pub fn config(&self) -> FaultConfig {
        let mut faults = FaultConfig {
            corrupt_checksum: self.corrupt_checksum,
            drop_reply: self.drop_reply,
            echo: self.echo,
            lockup_after_overload: self.lockup_after_overload.iter().copied().collect(),
            silences: self
                .silent
                .iter()
                .map(|time| SilenceWindow {
                    id: time.id,
                    from: time.from,
                    until: time.until,
                })
                .collect(),
            ..FaultConfig::none()
        };
        for (times, error) in [
            (&self.overload, ServoError::OVERLOAD),
            (&self.overheat, ServoError::OVERHEAT),
            (&self.voltage_error, ServoError::VOLTAGE),
        ] {
            faults.windows.extend(times.iter().map(|time| FaultWindow {
                id: time.id,
                error,
                from: time.from,
                until: time.until,
            }));
        }
        faults
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// Fault and adapter flags of a command line.
    #[derive(Debug, clap::Parser)]
    pub(crate) struct Command {
        #[command(flatten)]
        pub(crate) faults: FaultArgs,
        #[command(flatten)]
        pub(crate) plug: PlugArgs,
    }

    /// Parses fault and adapter flags as a command line would.
    pub(crate) fn parse_command(argv: &[&str]) -> Result<Command, clap::Error> {
        use clap::Parser;
        Command::try_parse_from(std::iter::once("emu").chain(argv.iter().copied()))
    }

    fn parse(argv: &[&str]) -> Result<FaultArgs, clap::Error> {
        parse_command(argv).map(|command| command.faults)
    }

    #[test]
    fn fault_flags_become_emulator_faults() {
        let always = |id| FaultTime::parse(id).unwrap();
        let faults = FaultArgs {
            drop_reply: 0.5,
            overload: vec![always("2")],
            overheat: vec![always("2"), always("3@1.5..4")],
            silent: vec![always("4"), always("5@2..3.5")],
            ..FaultArgs::default()
        }
        .config();
        let at = Duration::from_secs_f64;
        assert_eq!(faults.drop_reply, 0.5);
        assert_eq!(faults.forced(2, at(0.0)), ServoError::OVERLOAD | ServoError::OVERHEAT);
        assert_eq!(faults.forced(3, at(1.0)), ServoError::empty());
        assert_eq!(faults.forced(3, at(1.5)), ServoError::OVERHEAT);
        assert_eq!(faults.forced(3, at(4.0)), ServoError::empty());
        assert!(faults.is_silent_at(4, at(0.0)) && !faults.is_silent_at(2, at(0.0)));
        let brown_out = [1.9, 2.0, 3.4, 3.5].map(|s| faults.is_silent_at(5, at(s)));
        assert_eq!(brown_out, [false, true, true, false]);
        assert!(parse_probability("1.5").is_err());
    }

    #[test]
    fn command_line_flags_parse_into_faults() {
        let args = parse(&[
            "--corrupt-checksum",
            "0.25",
            "--silent",
            "5",
            "--voltage-error",
            "1",
            "--echo",
            "--seed",
            "7",
        ])
        .unwrap();
        assert_eq!(args.seed, 7);
        let faults = args.config();
        assert_eq!(faults.corrupt_checksum, 0.25);
        assert_eq!(faults.drop_reply, 0.0);
        assert!(faults.echo && faults.is_silent_at(5, Duration::ZERO));
        assert_eq!(faults.forced(1, Duration::from_secs(3600)), ServoError::VOLTAGE);
        assert_eq!(parse(&[]).unwrap().config(), FaultConfig::none());
        assert!(parse(&["--drop-reply", "-0.1"]).is_err());
    }

    #[test]
    fn the_arm_flag_picks_the_calibration_the_servos_hold() {
        #[derive(Debug, clap::Parser)]
        struct Arm {
            #[command(flatten)]
            arm: ArmArgs,
        }
        let parse = |argv: &[&str]| {
            use clap::Parser;
            Arm::try_parse_from(std::iter::once("emu").chain(argv.iter().copied())).map(|command| command.arm)
        };
        let so101 = parse(&[]).unwrap();
        assert_eq!(so101.kind, VirtualArm::So101);
        assert!(!so101.is_custom());
        assert_eq!(so101.calibration().unwrap(), VirtualSo101::calibration());
        let so100 = parse(&["--arm", "so100"]).unwrap();
        let calibration = VirtualArm::So100.calibration();
        assert!(so100.is_custom());
        assert_eq!(so100.calibration().unwrap(), calibration);
        for (servo, (_, motor)) in so100.servos().unwrap().iter().zip(calibration.by_id()) {
            assert_eq!(servo.id, motor.id);
            assert_eq!(servo.position_limits, (motor.range_min as u16, motor.range_max as u16));
            assert_eq!(i32::from(servo.homing_offset), motor.homing_offset);
        }
        assert!(parse(&["--arm", "so102"]).is_err());
    }

    #[test]
    fn fault_times_parse_and_refuse_nonsense() {
        let window = parse(&["--overload", "6@2..3.5"]).unwrap().overload;
        assert_eq!(
            window,
            [FaultTime {
                id: 6,
                from: Duration::from_secs(2),
                until: Some(Duration::from_millis(3500))
            }]
        );
        assert_eq!(FaultTime::parse("6@2").unwrap().until, None);
        for bad in ["x", "6@", "6@3..2", "6@-1", "300", "6@1..nan"] {
            assert!(FaultTime::parse(bad).is_err(), "{bad}");
        }
    }
}
