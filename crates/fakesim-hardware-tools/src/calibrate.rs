//! `fakesim-hil calibrate`: LeRobot's interactive calibration of an SO-101 or SO-100 arm (the
//! same six motors and procedure on both: middle pose,
//! then a sweep of every joint), saved as a file LeRobot reads; `--verify` compares servos
//! with a file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use feetech::bus::{Bus, BusConfig};
use feetech::calibration::{
    self, ArmKind, ArmRole, Calibration, MotorSpec, SO101_MOTORS, Sweep, calibration_path, calibration_root,
    find_calibration,
};
use feetech::control_table::{DEFAULT_BAUD_RATE, MODEL_NUMBER, STS3215_MODEL_NUMBER};
use feetech::units::steps_to_degrees;
use tokio::io::{AsyncRead, AsyncWrite};

use super::port::open_bus;
use super::progress::StatusBlock;
use super::{Console, ReplyTimeout, parse_baud};

/// How often joint positions are read during the sweep (LeRobot reads about every 20 ms).
const SWEEP_PERIOD: Duration = Duration::from_millis(20);

/// Arguments of `fakesim-hil calibrate`.
#[derive(Debug, Clone, clap::Args)]
pub struct CalibrateArgs {
    /// Serial port of the arm's servo bus.
    #[arg(long, value_name = "PATH")]
    pub port: PathBuf,
    /// Which arm: the follower (robot) or the leader (teleoperator).
    #[arg(long, value_enum, required_unless_present = "verify")]
    pub role: Option<Role>,
    /// Name of the arm; the file is `<NAME>.json`, as LeRobot's `--robot.id` / `--teleop.id`.
    #[arg(long = "id", value_name = "NAME", required_unless_present = "verify", value_parser = parse_arm_name)]
    pub arm: Option<String>,
    /// Directory to write `<NAME>.json` in [default: LeRobot's calibration directory,
    /// `robots/so_follower` or `teleoperators/so_leader`, or wherever the arm's file
    /// already is].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Baud rate of the servos.
    #[arg(long, value_name = "BAUD", default_value_t = DEFAULT_BAUD_RATE, value_parser = parse_baud)]
    pub baud: u32,
    /// The arm: so101 or so100 (LeRobot calibrates both alike and keeps both followers' files
    /// in `robots/so_follower`).
    #[arg(long = "arm", value_name = "ARM", default_value_t)]
    pub kind: fakesim_arm::ArmType,
    /// Instead of calibrating, compare the servos with this calibration file.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["role", "arm", "dir"])]
    pub verify: Option<PathBuf>,
    /// Reply timeout.
    #[command(flatten)]
    pub timeout: ReplyTimeout,
}

/// Follower or leader arm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    /// The driven arm (`robots/so101_follower`).
    Follower,
    /// The hand-moved arm (`teleoperators/so101_leader`).
    Leader,
}

impl Role {
    fn arm_role(self) -> ArmRole {
        match self {
            Self::Follower => ArmRole::Follower,
            Self::Leader => ArmRole::Leader,
        }
    }

    /// The directory this tool writes new files to: where current LeRobot looks.
    fn kind(self) -> ArmKind {
        match self {
            Self::Follower => ArmKind::SoFollower,
            Self::Leader => ArmKind::SoLeader,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Follower => "follower",
            Self::Leader => "leader",
        }
    }
}

/// An arm name usable as a file name.
pub(super) fn parse_arm_name(name: &str) -> Result<String, String> {
    let bad = name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']);
    if bad {
        return Err(format!("`{name}` cannot be used as a file name"));
    }
    Ok(name.to_owned())
}

/// Runs the calibration (or the comparison with `--verify`).
pub async fn run(args: CalibrateArgs, mut io: Console) -> anyhow::Result<()> {
    if let Some(file) = &args.verify {
        return verify_file(file, &args.port, args.baud, args.timeout.bus_config(), &mut io).await;
    }
    let (Some(role), Some(arm)) = (args.role, args.arm.as_deref()) else {
        bail!("--role and --id are required to calibrate");
    };
    let path = match &args.dir {
        Some(dir) => dir.join(format!("{arm}.json")),
        None => {
            let root = calibration_root()?;
            find_calibration(&root, role.arm_role(), arm).unwrap_or_else(|| calibration_path(&root, role.kind(), arm))
        }
    };
    let mut bus = open_bus(&args.port, args.baud, args.timeout.bus_config())?;
    if path.exists() {
        io.say(&format!("The new calibration will replace {}.", path.display()))?;
    }
    let on_port = || format!("calibrating the arm on {}", args.port.display());
    check_servos(&mut bus, &args.port, args.baud, &mut io).await?;
    let result = calibrate(&mut bus, role, &mut io).await.with_context(on_port)?;
    calibration::apply(&mut bus, &result).await.with_context(on_port)?;
    result.save(&path)?;
    print_calibration(&result, &mut io)?;
    io.say(&format!("Calibration written to {}", path.display()))?;
    match role {
        Role::Follower => io.say(&format!(
            "LeRobot reads it as --robot.type={} --robot.id={arm}; the daemon as --arm {} --robot-id {arm}",
            args.kind.spec().lerobot_robot,
            args.kind
        )),
        Role::Leader => Ok(()),
    }
}

/// Checks that all six servos answer and are STS3215s; warns about error flags.
async fn check_servos<T>(bus: &mut Bus<T>, port: &Path, baud: u32, io: &mut Console) -> anyhow::Result<()>
where
    T: AsyncRead + AsyncWrite + Unpin + Send,
{
    let mut missing = Vec::new();
    for motor in &SO101_MOTORS {
        match bus.read_register(motor.id, &MODEL_NUMBER).await {
            Ok(reply) => {
                if reply.value != i32::from(STS3215_MODEL_NUMBER) {
                    io.say(&format!(
                        "warning: servo {} ({}) is model {}, not an STS3215",
                        motor.id, motor.name, reply.value
                    ))?;
                }
                if !reply.error.is_empty() {
                    io.say(&format!(
                        "warning: servo {} ({}) reports {}",
                        motor.id, motor.name, reply.error
                    ))?;
                }
            }
            Err(error) if error.is_retryable() => missing.push(format!("{} ({})", motor.id, motor.name)),
            Err(error) => return Err(anyhow!("reading servo {} on {}: {error}", motor.id, port.display())),
        }
    }
    if !missing.is_empty() {
        bail!(
            "servo(s) {} did not answer on {} at {baud} baud. Check the cables and the power supply; \
             `fakesim-hil scan --port {}` shows which ids answer, and `fakesim-hil setup-ids` gives \
             new servos their ids.",
            missing.join(", "),
            port.display(),
            port.display()
        );
    }
    Ok(())
}

/// The interactive procedure: torque off, middle pose, range sweep.
async fn calibrate<T>(bus: &mut Bus<T>, role: Role, io: &mut Console) -> anyhow::Result<Calibration>
where
    T: AsyncRead + AsyncWrite + Unpin + Send,
{
    calibration::prepare(bus, &SO101_MOTORS).await?;
    io.prompt(&format!(
        "Torque is off. Move the {} arm to the middle of its range of motion, then press Enter.",
        role.label()
    ))
    .await?;
    let offsets = calibration::home_at_middle(bus, &SO101_MOTORS).await?;
    let full_turn: Vec<&str> = SO101_MOTORS
        .iter()
        .filter(|m| m.is_full_turn())
        .map(|m| m.name)
        .collect();
    io.say(&format!(
        "Move every joint except {} through its entire range of motion ({} counts as a full \
         turn), then press Enter.",
        full_turn.join(", "),
        full_turn.join(", ")
    ))?;
    let sweep = record_ranges(bus, io).await?;
    let result = sweep.finish(&offsets)?;
    let unmoved: Vec<&str> = SO101_MOTORS
        .iter()
        .filter(|m| !m.is_full_turn())
        .filter(|m| result.motors.get(m.name).is_some_and(|c| c.range_min == c.range_max))
        .map(|m| m.name)
        .collect();
    if !unmoved.is_empty() {
        bail!(
            "{} did not move during the sweep; run calibrate again and move every joint from one end to the other",
            unmoved.join(", ")
        );
    }
    Ok(result)
}

/// Samples positions until the user presses Enter, showing min / position / max per joint.
async fn record_ranges<T>(bus: &mut Bus<T>, io: &mut Console) -> anyhow::Result<Sweep>
where
    T: AsyncRead + AsyncWrite + Unpin + Send,
{
    let ids: Vec<u8> = SO101_MOTORS.iter().map(|m| m.id).collect();
    let mut sweep = Sweep::new(&SO101_MOTORS);
    let mut positions: BTreeMap<u8, i32> = BTreeMap::new();
    let mut block = StatusBlock::new();
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + SWEEP_PERIOD, SWEEP_PERIOD);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Sample first and once more after Enter, so the sweep always ends on the final pose.
    let mut done = false;
    loop {
        for reply in bus.sync_read_positions(&ids).await? {
            match reply {
                Ok(reply) => {
                    sweep.update(reply.id, reply.value);
                    positions.insert(reply.id, reply.value);
                }
                Err(error) => tracing::debug!(%error, "position not read during the sweep"),
            }
        }
        let rows = SO101_MOTORS
            .iter()
            .map(|motor| sweep_row(motor, positions.get(&motor.id).copied(), sweep.extent(motor.id)))
            .collect();
        block.show(io, rows)?;
        if done {
            break;
        }
        tokio::select! {
            line = io.read_line("Enter at the end of the sweep") => {
                line?;
                done = true;
            }
            _ = ticks.tick() => {}
        }
    }
    block.finish(io)?;
    Ok(sweep)
}

/// `shoulder_pan   min   812  pos  2047  max  3301` (or the full-turn note).
fn sweep_row(motor: &MotorSpec, position: Option<i32>, extent: Option<(i32, i32)>) -> String {
    let position = position.map_or("-".to_owned(), |p| p.to_string());
    match extent {
        Some((min, max)) => format!("{:<13} min {min:>5}  pos {position:>5}  max {max:>5}", motor.name),
        None if motor.is_full_turn() => format!("{:<13} pos {position:>5}  (full turn)", motor.name),
        None => format!("{:<13} pos {position:>5}", motor.name),
    }
}

/// The calibration as a table.
fn print_calibration(calibration: &Calibration, io: &mut Console) -> anyhow::Result<()> {
    io.say(&format!(
        "{:<13} {:>3} {:>7} {:>6} {:>6} {:>8}",
        "motor", "id", "offset", "min", "max", "span"
    ))?;
    for (name, motor) in calibration.by_id() {
        io.say(&format!(
            "{name:<13} {:>3} {:>7} {:>6} {:>6} {:>7.1}°",
            motor.id,
            motor.homing_offset,
            motor.range_min,
            motor.range_max,
            steps_to_degrees(motor.range_max - motor.range_min)
        ))?;
    }
    Ok(())
}

/// Compares the servos with `file`; fails when they differ.
async fn verify_file(file: &Path, port: &Path, baud: u32, config: BusConfig, io: &mut Console) -> anyhow::Result<()> {
    let expected = Calibration::load(file)?;
    let mut bus = open_bus(port, baud, config)?;
    let differences = calibration::verify(&mut bus, &expected)
        .await
        .with_context(|| format!("reading the servos on {}", port.display()))?;
    if differences.is_empty() {
        return io.say(&format!("The servos on {} match {}.", port.display(), file.display()));
    }
    for difference in &differences {
        io.say(&difference.to_string())?;
    }
    bail!(
        "{} difference(s) between the servos on {} and {}",
        differences.len(),
        port.display(),
        file.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_names_must_be_file_names() {
        assert_eq!(parse_arm_name("my_arm"), Ok("my_arm".to_owned()));
        for bad in ["", "..", "a/b"] {
            assert!(parse_arm_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sweep_rows() {
        let [pan, .., roll, _] = SO101_MOTORS;
        assert_eq!(
            sweep_row(&pan, Some(2047), Some((812, 3301))),
            "shoulder_pan  min   812  pos  2047  max  3301"
        );
        assert_eq!(
            sweep_row(&roll, Some(100), None),
            "wrist_roll    pos   100  (full turn)"
        );
        assert_eq!(sweep_row(&pan, None, None), "shoulder_pan  pos     -");
    }
}
