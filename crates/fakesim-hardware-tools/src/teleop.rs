//! `fakesim-hil teleop`: a leader arm moved by hand (torque off) drives a follower arm and
//! the twin, through the same safety layers as hardware in the loop, until Ctrl-C.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use fakesim_arm::Arm;
use fakesim_bridge::teleop::{DEFAULT_MAX_STEP_RAD, DEFAULT_RATE_HZ, Teleop, TeleopArms, TeleopConfig, TeleopStats};
use fakesim_bridge::twin::ScratchTwinKinematics;
use fakesim_feetech_arm::mapping::{CalibratedMapping, JointMapping};
use fakesim_feetech_arm::{FeetechArm, FeetechArmConfig};
use fakesim_safety::{DeltaCap, EstopLatch, Layers, RangeGuard, TableGuard};
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::values::Bounds;
use fakesim_twin::{Scene, Sim, TwinConfig, TwinHandle};
use feetech::calibration::{ArmKind, ArmRole, Calibration, calibration_path, calibration_root, find_calibration};
use feetech::control_table::DEFAULT_BAUD_RATE;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use super::calibrate::parse_arm_name;
use super::port::open_bus;
use super::progress::StatusBlock;
use super::{Console, ReplyTimeout, parse_baud};

/// How often the live counters are shown.
const DISPLAY_PERIOD: Duration = Duration::from_secs(1);

/// The scene whose table the table guard keeps the follower above.
const SCENE: Scene = Scene::Tabletop;

/// Arguments of `fakesim-hil teleop`.
#[derive(Debug, Clone, clap::Args)]
pub struct TeleopArgs {
    /// Serial port of the leader arm (moved by hand; its torque is switched off).
    #[arg(long, value_name = "PATH")]
    pub leader: PathBuf,
    /// Serial port of the follower arm; without it only the twin follows the leader.
    #[arg(long, value_name = "PATH")]
    pub port: Option<PathBuf>,
    /// Name of the leader in LeRobot's calibration directory
    /// (teleoperators/so_leader/NAME.json, or the older so101_leader).
    #[arg(long, value_name = "NAME", value_parser = parse_arm_name, conflicts_with = "leader_calibration")]
    pub leader_id: Option<String>,
    /// Name of the follower in LeRobot's calibration directory
    /// (robots/so_follower/NAME.json, or the older so101_follower).
    #[arg(long, value_name = "NAME", value_parser = parse_arm_name, conflicts_with = "follower_calibration")]
    pub follower_id: Option<String>,
    /// The leader's LeRobot calibration file, instead of --leader-id.
    #[arg(long, value_name = "FILE")]
    pub leader_calibration: Option<PathBuf>,
    /// The follower's LeRobot calibration file, instead of --follower-id.
    #[arg(long, value_name = "FILE")]
    pub follower_calibration: Option<PathBuf>,
    /// Where --leader-id and --follower-id are looked up [default: LeRobot's calibration
    /// directory, e.g. ~/.cache/huggingface/lerobot/calibration].
    #[arg(long, value_name = "DIR")]
    pub calibration_dir: Option<PathBuf>,
    /// Cycles per second.
    #[arg(long, value_name = "HZ", default_value_t = DEFAULT_RATE_HZ, value_parser = parse_rate)]
    pub rate: f64,
    /// Do not drive the twin (only the follower).
    #[arg(long)]
    pub no_twin: bool,
    /// Baud rate of both buses.
    #[arg(long, value_name = "BAUD", default_value_t = DEFAULT_BAUD_RATE, value_parser = parse_baud)]
    pub baud: u32,
    /// Reply timeout.
    #[command(flatten)]
    pub timeout: ReplyTimeout,
    /// Stop after this many cycles (for tests).
    #[arg(long, value_name = "N", hide = true)]
    pub cycles: Option<u64>,
}

/// A rate between 1 and 1000 Hz.
fn parse_rate(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|hz| (1.0..=1000.0).contains(hz))
        .ok_or_else(|| format!("`{text}` is not a rate between 1 and 1000 Hz"))
}

/// Runs teleoperation until Ctrl-C.
pub async fn run(args: TeleopArgs, io: Console) -> anyhow::Result<()> {
    run_until(args, io, crate::interrupt::installed()?).await
}

/// Runs teleoperation until `stop` completes (or `--cycles` were run), then switches the
/// follower's torque off.
pub async fn run_until(
    args: TeleopArgs,
    mut io: Console,
    stop: impl Future<Output = std::io::Result<()>>,
) -> anyhow::Result<()> {
    if args.port.is_none() && args.no_twin {
        bail!("nothing to drive: give the follower's --port, or leave out --no-twin");
    }
    let mut teleop = start(&args, &mut io).await?;
    let mut stats = teleop.watch_stats();
    let mut events = teleop.subscribe_events();
    let cancel = CancellationToken::new();
    let running = teleop.run(cancel.clone());
    tokio::pin!(running, stop);
    let mut display = tokio::time::interval_at(tokio::time::Instant::now() + DISPLAY_PERIOD, DISPLAY_PERIOD);
    display.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut block = StatusBlock::new();
    let mut stopped: std::io::Result<()> = Ok(());
    let finished = loop {
        tokio::select! {
            finished = &mut running => break finished,
            result = &mut stop, if !cancel.is_cancelled() => {
                stopped = result;
                cancel.cancel();
            }
            Some(event) = events.recv() => {
                io.say(&format!("safety event: {}", serde_json::to_string(&event)?))?;
            }
            _ = display.tick() => block.show(&mut io, vec![live_row(&stats.borrow())])?,
            Ok(()) = stats.changed(), if args.cycles.is_some() => {
                if args.cycles.is_some_and(|limit| stats.borrow().cycles >= limit) {
                    cancel.cancel();
                }
            }
        }
    };
    block.finish(&mut io)?;
    while let Ok(event) = events.try_recv() {
        io.say(&format!("safety event: {}", serde_json::to_string(&event)?))?;
    }
    let finished = finished.context("switching the follower's torque off")?;
    io.say(&format!("Stopped: {finished}."))?;
    stopped.context("waiting for Ctrl-C")
}

/// `teleop: 60.0 cycles/s, ...`.
fn live_row(stats: &TeleopStats) -> String {
    format!("teleop: {stats}")
}

/// Loads and checks both calibrations, opens the arms and starts the loop.
async fn start(args: &TeleopArgs, io: &mut Console) -> anyhow::Result<Teleop> {
    let twin = if args.no_twin {
        None
    } else {
        Some(TwinHandle::spawn(TwinConfig {
            scene: SCENE,
            ..TwinConfig::default()
        })?)
    };
    let ranges = match &twin {
        Some(twin) => twin.with_sim(|sim| sim.joint_ranges()).await?,
        None => Sim::load(&SCENE, DEFAULT_SUBSTEPS_PER_TICK)?.joint_ranges(),
    };
    let leader_file = calibration_file(args, ArmRole::Leader)?;
    let leader_mapping = bind(&leader_file, ArmRole::Leader, &ranges)?;
    let follower_mapping = match &args.port {
        Some(_) => {
            let file = calibration_file(args, ArmRole::Follower)?;
            Some((bind(&file, ArmRole::Follower, &ranges)?, file))
        }
        None => None,
    };

    let leader = open_arm(&args.leader, args, leader_mapping)?;
    let (follower, range, follower_text) = match (&args.port, follower_mapping) {
        (Some(port), Some((mapping, file))) => {
            let range = RangeGuard::with_calibration(ranges, mapping.calibrated_ranges());
            let arm: Arc<dyn Arm> = Arc::new(open_arm(port, args, mapping)?);
            let text = format!("the follower on {} ({})", port.display(), file.display());
            (Some(arm), range, text)
        }
        _ => (None, RangeGuard::model_only(ranges), "no follower".to_owned()),
    };
    let arms = TeleopArms {
        leader: Arc::new(leader),
        follower,
        twin,
    };
    let safety = Layers {
        range,
        table: TableGuard::default(),
        kinematics: Arc::new(ScratchTwinKinematics::load(&SCENE).context("loading the twin for the table guard")?),
        delta: DeltaCap::uniform(DEFAULT_MAX_STEP_RAD)?,
        preview: None,
        estop: EstopLatch::new(),
    };
    let teleop = Teleop::start(
        arms,
        safety,
        TeleopConfig {
            rate_hz: args.rate,
            ..TeleopConfig::default()
        },
    )
    .await
    .context("starting teleoperation")?;
    io.say(&format!(
        "Teleop at {} Hz: the leader on {} ({}) drives {follower_text}{}.",
        args.rate,
        args.leader.display(),
        leader_file.display(),
        if args.no_twin { "" } else { " and the twin" }
    ))?;
    io.say("Leader torque is off: move it by hand. Press Ctrl-C to stop (the follower's torque goes off).")?;
    Ok(teleop)
}

/// The calibration file of one arm: given, or found by name in LeRobot's layout.
fn calibration_file(args: &TeleopArgs, role: ArmRole) -> anyhow::Result<PathBuf> {
    let (file, id, id_flag, kind) = match role {
        ArmRole::Leader => (
            &args.leader_calibration,
            &args.leader_id,
            "--leader-id",
            ArmKind::SoLeader,
        ),
        ArmRole::Follower => (
            &args.follower_calibration,
            &args.follower_id,
            "--follower-id",
            ArmKind::SoFollower,
        ),
    };
    if let Some(file) = file {
        return Ok(file.clone());
    }
    let name = role_name(role);
    let id = id
        .as_deref()
        .ok_or_else(|| anyhow!("give {id_flag} NAME or --{name}-calibration FILE for the {name} arm"))?;
    let root = match &args.calibration_dir {
        Some(dir) => dir.clone(),
        None => calibration_root().context("cannot find LeRobot's calibration directory")?,
    };
    find_calibration(&root, role, id).ok_or_else(|| {
        anyhow!(
            "no calibration for the {name} {id:?}: expected {}; run `fakesim-hil calibrate --port DEVICE --role {name} --id {id}`",
            calibration_path(&root, kind, id).display()
        )
    })
}

fn role_name(role: ArmRole) -> &'static str {
    match role {
        ArmRole::Leader => "leader",
        ArmRole::Follower => "follower",
    }
}

/// Loads a calibration and checks the SO-101 mapping against it and the twin's ranges.
fn bind(file: &Path, role: ArmRole, ranges: &[Bounds; 6]) -> anyhow::Result<CalibratedMapping> {
    let calibration = Calibration::load(file)?;
    JointMapping::so101().bind(&calibration, ranges).with_context(|| {
        format!(
            "the {} calibration {} does not fit the twin",
            role_name(role),
            file.display()
        )
    })
}

fn open_arm(port: &Path, args: &TeleopArgs, mapping: CalibratedMapping) -> anyhow::Result<FeetechArm> {
    let bus = open_bus(port, args.baud, args.timeout.bus_config())?;
    Ok(FeetechArm::spawn(
        bus,
        mapping,
        FeetechArmConfig::new(port.display().to_string()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_between_1_and_1000_hz() {
        assert_eq!(parse_rate("60"), Ok(60.0));
        assert_eq!(parse_rate("1000"), Ok(1000.0));
        for bad in ["0", "1001", "fast", "NaN"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }
}
