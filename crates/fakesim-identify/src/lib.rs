//! Identifies an SO arm's joint dynamics from recordings: the recorded goals are replayed
//! open-loop on the MuJoCo twin from each segment's measured start, and each joint's stiffness,
//! damping, armature, friction, torque limit and transport delay are fitted to the measured
//! positions (see the manual's "Identifying your arm").

pub mod error;
pub mod fit;
pub mod pool;
pub mod profile;
pub mod progress;
pub mod read;
pub mod recording;
pub mod refine;
pub mod replay;
pub mod report;
pub mod room;
mod search;
mod solo;
pub mod split;
pub mod synth;
mod train;

pub use error::{FitFault, IdentifyError, Unusable};
pub use progress::{Progress, Stage};
pub use recording::Recording;

use fakesim_twin::dynamics::Dynamics;
use fit::{FitOptions, coordinates, dynamics_at};
use pool::{Pool, rms_per_joint};
use refine::{DELAY, held_parameters};
use replay::Replayer;
use solo::Solo;
use split::SplitOptions;
use std::time::Instant;
use train::{Best, Halt, Training, cost};

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
    /// Whether to profile every parameter for its standard error ([`profile`]; the fit's
    /// most expensive stage, so only when asked).
    pub profiles: bool,
    /// Where the run stands, and how to stop it early (shared with its clones).
    pub progress: Progress,
}

/// Per joint and parameter ([`fakesim_twin::dynamics::PARAMETERS`] order) standard errors:
/// relative (0.05 = ±5 %) but for the delay's, in seconds; infinite where unbounded.
pub type StandardErrors = [[f64; 6]; 6];

/// Per joint and parameter, the joint's parameters it trades off against, bit `k` for
/// parameter `k` ([`profile`]); 0 for none.
pub type TradeOffs = [[u8; 6]; 6];

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
    /// Per joint standard errors ([`profile`]), when [`Options::profiles`] asked for them and
    /// the run was not interrupted.
    pub standard_errors: Option<StandardErrors>,
    /// Which parameters trade off against which, measured with the standard errors.
    pub trade_offs: Option<TradeOffs>,
    /// Whether the run was interrupted ([`Progress::interrupt`]): the fitted dynamics are the
    /// best it had scored on the training part by then.
    pub interrupted: bool,
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
    /// What each stage of the fit cost, in the order they ran.
    pub stages: Vec<Stage>,
}

impl Outcome {
    /// Overall validation RMS (rad, every joint) before and after.
    pub fn validation_total(&self) -> [f64; 2] {
        let total = |i: usize| (self.validation_rms.iter().map(|r| r[i] * r[i]).sum::<f64>() / 6.0).sqrt();
        [total(0), total(1)]
    }
}

/// `fitted` with each joint whose training error the fit raised put back where it started,
/// when that lowers the training error over all joints (a short search can leave a joint
/// worse off). Returns the dynamics with their training errors, and the joints put back.
fn no_joint_worse(t: &Training<'_>, start: &Best, fitted: Dynamics) -> (Best, Vec<usize>) {
    let after = t.errors(&[fitted]).swap_remove(0);
    let (was, now) = (rms_per_joint(&start.errors), rms_per_joint(&after));
    let worse: Vec<usize> = (0..6).filter(|&j| now[j] > was[j]).collect();
    let as_fitted = Best {
        dynamics: fitted,
        errors: after,
    };
    if worse.is_empty() {
        return (as_fitted, worse);
    }
    let mut mixed = fitted;
    worse.iter().for_each(|&j| mixed.joints[j] = start.dynamics.joints[j]);
    let tried = t.errors(&[mixed]).swap_remove(0);
    if cost(&tried) >= cost(&as_fitted.errors) {
        return (as_fitted, Vec::new());
    }
    let put_back = Best {
        dynamics: mixed,
        errors: tried,
    };
    (put_back, worse)
}

/// The fit's stages from `start` on the training part: the dynamics with their training errors
/// and, when `opts` asks for them, their standard errors.
fn stages(
    t: &Training<'_>,
    solo: &Solo<'_>,
    start: &Best,
    opts: &Options,
) -> Result<(Best, Option<(StandardErrors, TradeOffs)>), Halt> {
    let rough = fit::fit(t, solo, &start.dynamics, &opts.fit)?;
    t.stage("polish");
    let polished = refine::polish(t, coordinates(&rough), opts.fit.rounds, held_parameters(DELAY));
    t.check()?;
    let (u, mut standard_errors) = if opts.profiles {
        t.stage("profiles");
        let profiled = profile::profile(t, polished, opts.fit.rounds);
        (profiled.fit.u, Some((profiled.standard_errors, profiled.trade_offs)))
    } else {
        t.stage("delay steps");
        (profile::step_delays(t, polished, opts.fit.rounds).u, None)
    };
    t.check()?;
    t.stage("checks");
    let (fit, put_back) = no_joint_worse(t, start, dynamics_at(&u));
    t.check()?;
    // A joint put back was not fitted: how well its parameters are determined is unknown.
    if let Some((se, trade_offs)) = &mut standard_errors {
        for &j in &put_back {
            se[j] = [f64::INFINITY; 6];
            trade_offs[j] = [0; 6];
        }
    }
    Ok((fit, standard_errors))
}

/// Checks, splits and fits `recordings` (all of one arm). An interrupted run
/// ([`Progress::interrupt`]) ends with the best dynamics scored so far.
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
    let t = Training::new(&pool, &parts.train, &opts.progress, start);
    let before = t.best();
    let before_val = pool.errors(&[start], &parts.validation).swap_remove(0);
    t.stage("joints alone");
    let solo = Solo::new(&mut replay::model(arm)?, &pool, &parts.train)?;
    let (fit, uncertainty, interrupted) = match stages(&t, &solo, &before, opts) {
        Ok((fit, uncertainty)) => (fit, uncertainty, false),
        Err(Halt::Fault(fault)) => return Err(fault.into()),
        Err(Halt::Interrupted) => (t.best(), None, true),
    };
    let (fitted, after) = (fit.dynamics, fit.errors);
    t.stage("checks");
    let after_val = pool.errors(&[fitted], &parts.validation).swap_remove(0);
    pool.check()?;
    let pair = |a: [f64; 6], b: [f64; 6]| std::array::from_fn(|j| [a[j], b[j]]);
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
        kept: cost(&after_val) < cost(&before_val),
        train_rms: pair(rms_per_joint(&before.errors), rms_per_joint(&after)),
        validation_rms: pair(rms_per_joint(&before_val), rms_per_joint(&after_val)),
        standard_errors: uncertainty.map(|u| u.0),
        trade_offs: uncertainty.map(|u| u.1),
        interrupted,
        seconds: [seconds(&parts.train), seconds(&parts.validation)],
        rollouts: pool.rollouts(),
        threads,
        physics_step_s: pool.timestep(),
        elapsed_s: began.elapsed().as_secs_f64(),
        stages: t.stages(),
    })
}
