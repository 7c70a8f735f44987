//! The training part as the fit's stages see it: rollouts of the training segments on the pool
//! that keep the best dynamics scored so far, report where the fit stands ([`Progress`]), time
//! each stage, and stop when the fit is interrupted.

use crate::error::FitFault;
use crate::pool::Pool;
use crate::progress::{Progress, Stage, Stages};
use crate::split::Segment;
use fakesim_twin::dynamics::Dynamics;
use std::sync::{Mutex, PoisonError};

/// Why a stage ended early.
#[derive(Debug)]
pub(crate) enum Halt {
    /// One of the fit's threads failed.
    Fault(FitFault),
    /// The fit was asked to stop ([`Progress::interrupt`]).
    Interrupted,
}

impl From<FitFault> for Halt {
    fn from(fault: FitFault) -> Self {
        Halt::Fault(fault)
    }
}

/// The best dynamics scored on the training part and their errors.
#[derive(Debug, Clone)]
pub(crate) struct Best {
    /// The dynamics.
    pub dynamics: Dynamics,
    /// Their training errors, laid out as [`Pool::errors`] gives them.
    pub errors: Vec<f64>,
}

/// The training segments replayed on a pool.
pub(crate) struct Training<'t> {
    pool: &'t Pool<'t>,
    segments: &'t [Segment],
    progress: &'t Progress,
    best: Mutex<(f64, Best)>,
    stages: Mutex<Stages>,
}

/// The sum of squared errors.
pub(crate) fn cost(errors: &[f64]) -> f64 {
    errors.iter().map(|e| e * e).sum()
}

impl<'t> Training<'t> {
    /// The training `segments` on `pool`, reporting to `progress`, from `start`: the stage
    /// "start" begins, and `start`'s training errors (whatever [`Progress`] says) make it the
    /// best so far.
    pub fn new(pool: &'t Pool<'t>, segments: &'t [Segment], progress: &'t Progress, start: Dynamics) -> Self {
        let training = Training {
            pool,
            segments,
            progress,
            best: Mutex::new((
                f64::INFINITY,
                Best {
                    dynamics: start,
                    errors: Vec::new(),
                },
            )),
            stages: Mutex::new(Stages::default()),
        };
        training.stage("start");
        let errors = pool.errors(&[start], segments).swap_remove(0);
        training.keep_if_best(&start, &errors);
        training.progress.update(|s| s.rollouts = pool.rollouts());
        training
    }

    /// Position errors of the training segments under each of `sets` ([`Pool::errors`]); NaN
    /// once the fit is interrupted or the pool faulted.
    pub fn errors(&self, sets: &[Dynamics]) -> Vec<Vec<f64>> {
        let errors = self.pool.errors_until(sets, self.segments, self.progress.stop_flag());
        for (dynamics, errors) in sets.iter().zip(&errors) {
            self.keep_if_best(dynamics, errors);
        }
        self.progress.update(|s| s.rollouts = self.pool.rollouts());
        errors
    }

    /// Scores `dynamics` on the training segments, even once the fit is interrupted, and keeps
    /// them if they are the best so far (what a fit stopped early ends with).
    pub fn keep(&self, dynamics: &Dynamics) {
        let errors = self
            .pool
            .errors(std::slice::from_ref(dynamics), self.segments)
            .swap_remove(0);
        self.keep_if_best(dynamics, &errors);
        self.progress.update(|s| s.rollouts = self.pool.rollouts());
    }

    /// Keeps `dynamics` as the best if `errors` are finite and lower than the best's.
    fn keep_if_best(&self, dynamics: &Dynamics, errors: &[f64]) {
        let c = cost(errors);
        let mut best = self.best.lock().unwrap_or_else(PoisonError::into_inner);
        if c.is_finite() && c < best.0 {
            *best = (
                c,
                Best {
                    dynamics: *dynamics,
                    errors: errors.to_vec(),
                },
            );
            let rms = (c / errors.len().max(1) as f64).sqrt();
            self.progress.update(|s| s.train_rms = Some(rms));
        }
    }

    /// The best dynamics scored so far.
    pub fn best(&self) -> Best {
        self.best.lock().unwrap_or_else(PoisonError::into_inner).1.clone()
    }

    /// Threads the rollouts run on.
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    /// The flag [`Progress::interrupt`] sets.
    pub fn stop_flag(&self) -> &std::sync::atomic::AtomicBool {
        self.progress.stop_flag()
    }

    /// Reports the search on the joints alone: `replays` so far, and the RMS (rad, every
    /// joint) of each joint's lowest error alone so far.
    pub fn report_alone(&self, replays: usize, rms: f64) {
        self.progress.update(|s| s.alone = Some((replays, rms)));
    }

    /// Training segments.
    pub fn segments(&self) -> usize {
        self.segments.len()
    }

    /// The physics step of the replays (s).
    pub fn timestep(&self) -> f64 {
        self.pool.timestep()
    }

    /// Whether the fit goes on: a fault of the pool, or an interruption, ends it.
    pub fn check(&self) -> Result<(), Halt> {
        self.pool.check()?;
        if self.progress.interrupted() {
            return Err(Halt::Interrupted);
        }
        Ok(())
    }

    /// Begins stage `name` (the one running ends).
    pub fn stage(&self, name: &'static str) {
        let rollouts = self.pool.rollouts();
        self.stages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .begin(name, rollouts);
        self.progress.update(|s| s.stage = name);
    }

    /// Ends the stage running and gives every stage's cost.
    pub fn stages(&self) -> Vec<Stage> {
        let mut stages = self.stages.lock().unwrap_or_else(PoisonError::into_inner);
        stages.end(self.pool.rollouts());
        stages.done().to_vec()
    }
}
