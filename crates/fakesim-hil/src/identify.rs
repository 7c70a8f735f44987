//! `fakesim-hil identify`: fits each joint's dynamics to recordings of one arm (the daemon's
//! traces, LeRobotDataset episodes, CSV/NPY tables) with `fakesim_identify`, shows its progress
//! every second, prints the figures, and writes the dynamics profile when the validation gate
//! keeps the fit. Ctrl-C ends the fit early with the best dynamics so far (a second quits).

use anyhow::{Context, anyhow, bail};
use fakesim_feetech_arm::mapping::LeRobotUnit;
use fakesim_identify::fit::FitOptions;
use fakesim_identify::progress::Status;
use fakesim_identify::read::{Selection, Units};
use fakesim_identify::{Options, Outcome, Progress, Recording, identify, report};
use fakesim_twin::ArmType;
use fakesim_twin::dynamics::profile::{FitRecord, Profile, path_beside_calibration};
use fakesim_twin::joints::Joint;
use feetech::calibration::{ArmKind, ArmRole, calibration_path, calibration_root, find_calibration};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use tokio::signal::unix::{SignalKind, signal};
use tokio::time::{Instant, MissedTickBehavior, interval_at};

/// How often the progress line is shown.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
/// The exit code of a second Ctrl-C (128 + SIGINT, as a shell reports a process it killed).
const QUIT_AT_ONCE: i32 = 130;

/// LeRobot's joint units in a dataset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DatasetUnits {
    /// Degrees about the middle of the calibrated range (`use_degrees=True`, LeRobot's default).
    Degrees,
    /// -100..100 over the calibrated range (`use_degrees=False`).
    Range,
}

/// Fit each joint's dynamics (stiffness, damping, armature, friction, torque limit, delay) to
/// recordings of one arm, and write its dynamics profile when the fit holds on validation.
#[derive(Debug, Clone, clap::Args)]
pub struct IdentifyArgs {
    /// Recordings of the arm: traces the daemon wrote (--trace), LeRobotDataset directories
    /// (v3.0, v2.1), or CSV/NPY tables of time, goals and positions in radians.
    #[arg(required = true, value_name = "RECORDING")]
    pub recordings: Vec<PathBuf>,
    /// The arm recorded: so101 or so100.
    #[arg(long, value_name = "ARM", default_value = "so101")]
    pub robot: ArmType,
    /// LeRobot's id of the arm: the profile goes beside its calibration (ID.dynamics.toml),
    /// whose calibration converts a dataset's units.
    #[arg(long, value_name = "ID")]
    pub robot_id: Option<String>,
    /// The arm's LeRobot calibration file (else found by --robot-id; a dataset without either
    /// is read through the nominal calibration).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Where to write the profile [default: beside the calibration of --robot-id or --calibration].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write the figures as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// A dataset's episodes to read, comma-separated [default: all].
    #[arg(long, value_name = "N,...", value_delimiter = ',')]
    pub episodes: Vec<u64>,
    /// A dataset's joint units.
    #[arg(long, value_name = "UNITS", value_enum, default_value = "degrees")]
    pub units: DatasetUnits,
    /// Generations of each of a joint's evolution strategies (each is --population replays of
    /// the joint alone).
    #[arg(long, value_name = "N", default_value_t = FitOptions::default().generations)]
    pub generations: usize,
    /// Candidates per generation.
    #[arg(long, value_name = "N", default_value_t = FitOptions::default().population)]
    pub population: usize,
    /// Evolution strategies per joint, each from the start with its own seed and a wider first
    /// step; each joint keeps the best any found.
    #[arg(long, value_name = "N", default_value_t = FitOptions::default().runs)]
    pub runs: usize,
    /// Seed of the strategies (a run is repeatable).
    #[arg(long, value_name = "N", default_value_t = FitOptions::default().seed)]
    pub seed: u64,
    /// Most Levenberg–Marquardt rounds of each polish, the fit's and every profile's (0: none).
    #[arg(long, value_name = "N", default_value_t = FitOptions::default().rounds)]
    pub rounds: usize,
    /// Threads the rollouts run on [default: one per core].
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Measure each parameter's standard error by its profile (it more than doubles the rollouts).
    #[arg(long)]
    pub profiles: bool,
}

/// Runs the identification and reports, with a progress line every second; fails on a refused
/// recording, a fit not kept or an interrupted one (whose best fit so far is written if kept).
pub async fn run(args: IdentifyArgs) -> anyhow::Result<()> {
    // Installed before the fit starts: a Ctrl-C during it ends the fit, never the process.
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot install the SIGINT handler")?;
    let progress = Progress::default();
    let fit = tokio::task::spawn_blocking({
        let progress = progress.clone();
        move || run_blocking(&args, progress)
    });
    tokio::pin!(fit);
    let began = Instant::now();
    let mut ticks = interval_at(began + PROGRESS_EVERY, PROGRESS_EVERY);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut shown = Status::default();
    loop {
        tokio::select! {
            done = &mut fit => return done.context("the identification panicked")?,
            _ = ticks.tick() => {
                let now = progress.status();
                if now != shown && !now.stage.is_empty() {
                    eprintln!("{}", progress_line(&now, began.elapsed()));
                    shown = now;
                }
            }
            _ = interrupt.recv() => {
                if progress.interrupted() {
                    eprintln!("interrupted again: quitting at once");
                    std::process::exit(QUIT_AT_ONCE);
                }
                progress.interrupt();
                eprintln!("interrupted: ending the fit with the best dynamics so far (Ctrl-C again quits at once)");
            }
        }
    }
}

/// The progress line: the stage, the rollouts so far and the best training error so far (while
/// the joints are searched alone, that search's replays and error).
fn progress_line(status: &Status, elapsed: Duration) -> String {
    let mrad = |rms: f64| format!("{:.2} mrad", 1e3 * rms);
    let what = match (status.stage, status.alone) {
        ("joints alone", Some((replays, rms))) => {
            format!("{replays} replays of a joint alone, RMS {}", mrad(rms))
        }
        _ => format!(
            "{} rollouts, training RMS {}",
            status.rollouts,
            status.train_rms.map_or_else(|| "not yet scored".to_owned(), mrad)
        ),
    };
    format!("progress: {} ({:.0} s): {what}", status.stage, elapsed.as_secs_f64())
}

fn run_blocking(args: &IdentifyArgs, progress: Progress) -> anyhow::Result<()> {
    if args.population < 2 || args.generations == 0 {
        bail!("--population must be at least 2 and --generations at least 1");
    }
    let calibration = calibration_of(args)?;
    let out = match (&args.out, &calibration, &args.robot_id) {
        (Some(out), _, _) => out.clone(),
        (None, Some(calibration), _) => path_beside_calibration(calibration),
        (None, None, Some(id)) => {
            let root = calibration_root().context("cannot find LeRobot's calibration directory")?;
            path_beside_calibration(&calibration_path(&root, ArmKind::SoFollower, id))
        }
        (None, None, None) => bail!(
            "say where the profile goes: --robot-id ID (beside its LeRobot calibration), --calibration FILE or --out FILE"
        ),
    };
    let unit = match args.units {
        DatasetUnits::Degrees => LeRobotUnit::Degrees,
        DatasetUnits::Range => LeRobotUnit::Range,
    };
    let units = Units::new(args.robot, calibration.as_deref(), unit)?;
    let selection = Selection {
        episodes: args.episodes.clone(),
    };
    let mut recordings: Vec<Recording> = Vec::new();
    for path in &args.recordings {
        recordings.extend(fakesim_identify::read::load(path, &units, &selection)?);
    }
    if let Some(other) = recordings.iter().find(|r| r.arm != args.robot) {
        bail!(
            "{} is a recording of an {}, but --robot is {}",
            other.name,
            other.arm,
            args.robot
        );
    }
    let options = Options {
        fit: FitOptions {
            generations: args.generations,
            population: args.population,
            runs: args.runs,
            seed: args.seed,
            rounds: args.rounds,
        },
        threads: args.threads.unwrap_or(0),
        profiles: args.profiles,
        progress,
        ..Options::default()
    };
    let seconds: f64 = recordings.iter().map(Recording::duration).sum();
    eprintln!(
        "fitting {} recording(s), {seconds:.1} s, {} strategies of {} generations of {} candidates per joint…",
        recordings.len(),
        args.runs,
        args.generations,
        args.population
    );
    let outcome = identify(&recordings, &options)?;
    print!("{}", report::text(&outcome));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&report::json(&outcome))?;
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if !outcome.kept && outcome.interrupted {
        bail!("interrupted before the fit lowered the validation error; no profile written");
    }
    if !outcome.kept {
        bail!("the fit did not lower the validation error; no profile written (record more, or longer, motion)");
    }
    let given: Vec<String> = args.recordings.iter().map(|p| p.display().to_string()).collect();
    let profile = Profile::new(
        args.robot,
        args.robot_id.clone(),
        &outcome.fitted,
        Some(outcome.physics_step_s),
        Some(fit_record(&outcome, given)),
    );
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    profile.save(&out)?;
    println!("\nprofile written: {}", out.display());
    if outcome.interrupted {
        bail!("interrupted: the profile written is the best fit so far; run again to finish the fit");
    }
    Ok(())
}

/// The calibration file: named, else found by robot id (none: a dataset is read nominally).
fn calibration_of(args: &IdentifyArgs) -> anyhow::Result<Option<PathBuf>> {
    if let Some(path) = &args.calibration {
        if !path.is_file() {
            return Err(anyhow!("no calibration file {}", path.display()));
        }
        return Ok(Some(path.clone()));
    }
    let Some(id) = &args.robot_id else {
        return Ok(None);
    };
    let root = calibration_root().context("cannot find LeRobot's calibration directory")?;
    Ok(find_calibration(&root, ArmRole::Follower, id))
}

/// What the profile keeps of the fit.
fn fit_record(outcome: &Outcome, recordings: Vec<String>) -> FitRecord {
    let by_joint = |rows: &[[f64; 2]; 6]| -> BTreeMap<String, [f64; 2]> {
        Joint::ALL
            .into_iter()
            .map(|joint| (joint.label().to_owned(), rows[joint.index()]))
            .collect()
    };
    FitRecord {
        recordings,
        seconds: outcome.seconds,
        train_rms_rad: by_joint(&outcome.train_rms),
        validation_rms_rad: by_joint(&outcome.validation_rms),
    }
}
