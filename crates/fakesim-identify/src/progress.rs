//! What a running fit shows of itself (its stage, its rollouts, its best training error so far)
//! and how it is asked to stop; and what each of its stages cost.

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeValLike;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

/// A handle on a fit, shared by its clones: where it stands, read at any time from any thread,
/// and a request to stop early with the best fit so far.
#[derive(Debug, Clone, Default)]
pub struct Progress(Arc<Shared>);

#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    status: Mutex<Status>,
}

/// Where a fit stands.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    /// The stage running ([`Stage::name`]; empty before the first).
    pub stage: &'static str,
    /// Segment rollouts run so far.
    pub rollouts: usize,
    /// RMS training error (rad, every joint) of the best dynamics so far.
    pub train_rms: Option<f64>,
    /// The search on the joints alone, once it has begun: its replays of a joint so far, and
    /// the RMS (rad, every joint) of each joint's lowest error alone so far.
    pub alone: Option<(usize, f64)>,
}

impl Progress {
    /// Where the fit stands now.
    pub fn status(&self) -> Status {
        self.0.status.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Asks the fit to stop: it ends after the rollouts under way, with the best dynamics it
    /// has scored on the training part, and says it was interrupted.
    pub fn interrupt(&self) {
        self.0.stop.store(true, Ordering::Release);
    }

    /// Whether the fit was asked to stop.
    pub fn interrupted(&self) -> bool {
        self.0.stop.load(Ordering::Acquire)
    }

    /// The flag [`Progress::interrupt`] sets.
    pub(crate) fn stop_flag(&self) -> &AtomicBool {
        &self.0.stop
    }

    /// Changes the status.
    pub(crate) fn update(&self, change: impl FnOnce(&mut Status)) {
        change(&mut self.0.status.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// What one stage of a run cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// What the stage does, in a few words.
    pub name: &'static str,
    /// Wall time (s).
    pub wall_s: f64,
    /// CPU time of the whole process (s, every thread; NaN where the system does not say).
    pub cpu_s: f64,
    /// Segment rollouts run.
    pub rollouts: usize,
}

/// The stages of a run as they go: each ends where the next begins.
#[derive(Debug, Default)]
pub(crate) struct Stages {
    done: Vec<Stage>,
    /// The stage running: its name, and the clock, the CPU time and the rollouts at its start.
    running: Option<(&'static str, Instant, f64, usize)>,
}

impl Stages {
    /// Ends the stage running (if another) and begins `name`, `rollouts` having run so far.
    pub fn begin(&mut self, name: &'static str, rollouts: usize) {
        if self.running.is_some_and(|r| r.0 == name) {
            return;
        }
        self.end(rollouts);
        self.running = Some((name, Instant::now(), cpu_s(), rollouts));
    }

    /// Ends the stage running, `rollouts` having run so far.
    pub fn end(&mut self, rollouts: usize) {
        if let Some((name, began, cpu, first)) = self.running.take() {
            self.done.push(Stage {
                name,
                wall_s: began.elapsed().as_secs_f64(),
                cpu_s: cpu_s() - cpu,
                rollouts: rollouts - first,
            });
        }
    }

    /// The stages ended.
    pub fn done(&self) -> &[Stage] {
        &self.done
    }
}

/// CPU time the process has used (s, user and system, every thread); NaN if unknown.
fn cpu_s() -> f64 {
    getrusage(UsageWho::RUSAGE_SELF).map_or(f64::NAN, |u| {
        1e-6 * (u.user_time().num_microseconds() + u.system_time().num_microseconds()) as f64
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_ends_where_the_next_begins_with_the_rollouts_between() {
        let mut stages = Stages::default();
        stages.begin("first", 0);
        stages.begin("first", 5);
        stages.begin("second", 12);
        stages.end(30);
        stages.end(40);
        let done: Vec<(&str, usize)> = stages.done().iter().map(|s| (s.name, s.rollouts)).collect();
        assert_eq!(done, [("first", 12), ("second", 18)]);
        assert!(stages.done().iter().all(|s| s.wall_s >= 0.0 && s.cpu_s >= 0.0));
    }

    #[test]
    fn an_interrupt_is_seen_by_every_clone() {
        let progress = Progress::default();
        let other = progress.clone();
        assert!(!other.interrupted());
        progress.interrupt();
        assert!(other.interrupted() && other.stop_flag().load(Ordering::Relaxed));
    }
}
