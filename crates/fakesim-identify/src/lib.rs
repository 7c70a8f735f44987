//! Identifies an SO arm's joint dynamics from recordings: the recorded goals are replayed
//! open-loop on the MuJoCo twin from each segment's measured start, and each joint's stiffness,
//! damping, armature, friction, torque limit and transport delay are fitted to the measured
//! positions (see the manual's "Identifying your arm").

mod board;
pub mod error;
pub mod fit;
pub mod pool;
pub mod profile;
pub mod read;
pub mod recording;
pub mod refine;
pub mod replay;
pub mod report;
pub mod room;
pub mod split;
pub mod synth;

pub use error::{FitFault, IdentifyError, Unusable};
pub use recording::Recording;

use fakesim_twin::dynamics::Dynamics;
use fit::FitOptions;
use pool::{Pool, rms_per_joint};
use replay::Replayer;
use split::SplitOptions;
use std::time::Instant;

/// Everything a run of the identification may be told.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// How recordings are checked and cut.
    pub split: SplitOptions,
    /// How far the fit may go.
    pub fit: FitOptions,
    /// Worker threads for the rollouts (0: one per core).
    pub threads: usize,
    /// Where the fit starts (default: the twin's model).
    pub start: Option<Dynamics>,
}

/// What a run found.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The dynamics the fit started from.
    pub start: Dynamics,
    /// The fitted dynamics.
    pub fitted: Dynamics,
    /// Whether the fit lowered the validation error (only then is it worth keeping).
    pub kept: bool,
    /// Per joint RMS error (rad) on training, before and after.
    pub train_rms: [[f64; 2]; 6],
    /// Per joint RMS error (rad) on validation, before and after.
    pub validation_rms: [[f64; 2]; 6],
    /// Per joint standard errors ([`profile`]).
    pub standard_errors: [[f64; 6]; 6],
    /// Seconds of recording in training and in validation.
    pub seconds: [f64; 2],
    /// Segment rollouts run.
    pub rollouts: usize,
    /// Threads the rollouts ran on.
    pub threads: usize,
    /// The physics step the replays ran at (s): the fitted dynamics hold at it.
    pub physics_step_s: f64,
    /// Wall time of the whole run (s).
    pub elapsed_s: f64,
}

impl Outcome {
    /// Overall validation RMS (rad, every joint) before and after.
    pub fn validation_total(&self) -> [f64; 2] {
        let total = |i: usize| (self.validation_rms.iter().map(|r| r[i] * r[i]).sum::<f64>() / 6.0).sqrt();
        [total(0), total(1)]
    }
}

/// `refined` with each joint whose training error the fit raised put back where it started,
/// when that lowers the training error over all joints (a short search can leave a joint
/// worse off); such joints' standard errors become unknown. Returns the dynamics and their
/// training errors.
fn no_joint_worse(
    pool: &Pool<'_>,
    train: &[split::Segment],
    start: &Dynamics,
    before: &[f64],
    refined: &mut refine::Refined,
) -> (Dynamics, Vec<f64>) {
    let fitted = refined.dynamics;
    let after = pool.errors(&[fitted], train).swap_remove(0);
    let (was, now) = (rms_per_joint(before), rms_per_joint(&after));
    let worse: Vec<usize> = (0..6).filter(|&j| now[j] > was[j]).collect();
    if worse.is_empty() {
        return (fitted, after);
    }
    let mut mixed = fitted;
    worse.iter().for_each(|&j| mixed.joints[j] = start.joints[j]);
    let tried = pool.errors(&[mixed], train).swap_remove(0);
    let sum_sq = |e: &[f64]| e.iter().map(|x| x * x).sum::<f64>();
    if sum_sq(&tried) >= sum_sq(&after) {
        return (fitted, after);
    }
    worse
        .iter()
        .for_each(|&j| refined.standard_errors[j] = [f64::INFINITY; 6]);
    refined.dynamics = mixed;
    (mixed, tried)
}

/// Checks, splits and fits `recordings` (all of one arm).
pub fn identify(recordings: &[Recording], opts: &Options) -> Result<Outcome, IdentifyError> {
    let began = Instant::now();
    let first = recordings.first().ok_or_else(|| IdentifyError::Read {
        path: "(none)".into(),
        what: "no recording given".into(),
    })?;
    let arm = first.arm;
    if let Some(other) = recordings.iter().find(|r| r.arm != arm) {
        return Err(IdentifyError::MixedArms(format!(
            "{} is {}, {} is {}",
            first.name, arm, other.name, other.arm
        )));
    }
    let probe = Replayer::new(arm)?;
    let ranges = probe.ranges();
    for rec in recordings {
        split::check(rec, &ranges, &opts.split).map_err(|reason| IdentifyError::Unusable {
            name: rec.name.clone(),
            reason,
        })?;
    }
    let parts = split::split(recordings, &opts.split);
    if parts.train.is_empty() || parts.validation.is_empty() {
        let seconds = recordings.iter().map(Recording::duration).sum();
        return Err(IdentifyError::Unusable {
            name: first.name.clone(),
            reason: Unusable::TooShort {
                seconds,
                readings: recordings.iter().map(|r| r.readings.len()).sum(),
                need_s: opts.split.min_seconds,
            },
        });
    }
    let start = match opts.start {
        Some(d) => d,
        None => probe.defaults(arm)?,
    };
    drop(probe);
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    };
    let pool = Pool::new(arm, recordings, threads)?;
    let before = pool.errors(&[start], &parts.train).swap_remove(0);
    let before_val = pool.errors(&[start], &parts.validation).swap_remove(0);
    let rough = fit::fit(&pool, &parts.train, &start, &opts.fit)?;
    let mut refined = refine::refine(&pool, &parts.train, &rough, opts.fit.rounds);
    let (fitted, after) = no_joint_worse(&pool, &parts.train, &start, &before, &mut refined);
    let after_val = pool.errors(&[fitted], &parts.validation).swap_remove(0);
    pool.check()?;
    let pair = |a: [f64; 6], b: [f64; 6]| std::array::from_fn(|j| [a[j], b[j]]);
    let sum_sq = |e: &[f64]| e.iter().map(|x| x * x).sum::<f64>();
    let seconds = |segs: &[split::Segment]| {
        segs.iter()
            .map(|s| {
                let r = &recordings[s.recording].readings;
                r[s.last].0 - r[s.first].0
            })
            .sum()
    };
    Ok(Outcome {
        start,
        fitted,
        kept: sum_sq(&after_val) < sum_sq(&before_val),
        train_rms: pair(rms_per_joint(&before), rms_per_joint(&after)),
        validation_rms: pair(rms_per_joint(&before_val), rms_per_joint(&after_val)),
        standard_errors: refined.standard_errors,
        seconds: [seconds(&parts.train), seconds(&parts.validation)],
        rollouts: pool.rollouts(),
        threads,
        physics_step_s: pool.timestep(),
        elapsed_s: began.elapsed().as_secs_f64(),
    })
}
