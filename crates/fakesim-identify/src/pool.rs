//! Rollouts spread over worker threads, each with a twin model of its own, and the position
//! errors they leave against the recordings. A worker that panics, or whose model a panic left
//! unusable, faults the pool: from then on every error is NaN (never a perfect fit) and
//! [`Pool::check`] names the worker.

use crate::error::FitFault;
use crate::recording::Recording;
use crate::replay::{Replayer, compared};
use crate::split::Segment;
use fakesim_twin::dynamics::Dynamics;
use fakesim_twin::{ArmType, TwinError};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Fastest rate (Hz) a rollout is compared with the readings at; faster readings are thinned.
const COMPARE_HZ: f64 = 100.0;

/// The recordings and the worker threads that replay them.
pub struct Pool<'a> {
    recordings: &'a [Recording],
    strides: Vec<usize>,
    workers: Vec<Mutex<Replayer>>,
    timestep: f64,
    rollouts: AtomicUsize,
    fault: OnceLock<FitFault>,
}

impl<'a> Pool<'a> {
    /// `threads` workers (at least one) replaying `recordings` of `arm`.
    pub fn new(arm: ArmType, recordings: &'a [Recording], threads: usize) -> Result<Self, TwinError> {
        let workers: Vec<Replayer> = (0..threads.max(1))
            .map(|_| Replayer::new(arm))
            .collect::<Result<_, _>>()?;
        let timestep = workers[0].timestep();
        let strides = recordings
            .iter()
            .map(|r| ((1.0 / COMPARE_HZ / r.reading_period().max(1e-6)).round() as usize).max(1))
            .collect();
        Ok(Pool {
            recordings,
            strides,
            workers: workers.into_iter().map(Mutex::new).collect(),
            timestep,
            rollouts: AtomicUsize::new(0),
            fault: OnceLock::new(),
        })
    }

    /// Segment rollouts run so far.
    pub fn rollouts(&self) -> usize {
        self.rollouts.load(Ordering::Relaxed)
    }

    /// Worker threads.
    pub fn threads(&self) -> usize {
        self.workers.len()
    }

    /// How many readings apart each recording's rollouts are compared with it.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    /// The physics step of the replays (s).
    pub fn timestep(&self) -> f64 {
        self.timestep
    }

    /// The recordings replayed.
    pub fn recordings(&self) -> &'a [Recording] {
        self.recordings
    }

    /// The first fault of a worker, if one failed.
    pub fn check(&self) -> Result<(), FitFault> {
        self.fault.get().map_or(Ok(()), |fault| Err(fault.clone()))
    }

    /// Position errors (predicted − measured, rad) of every segment under each of `sets`:
    /// one vector per set, segment by segment, compared reading by reading, joint by joint;
    /// all NaN once the pool is faulted.
    pub fn errors(&self, sets: &[Dynamics], segments: &[Segment]) -> Vec<Vec<f64>> {
        self.errors_until(sets, segments, &AtomicBool::new(false))
    }

    /// [`Pool::errors`], but no rollout starts once `stop` is set, and then every error is NaN.
    pub fn errors_until(&self, sets: &[Dynamics], segments: &[Segment], stop: &AtomicBool) -> Vec<Vec<f64>> {
        if self.fault.get().is_some() {
            return self.unusable(sets, segments);
        }
        let jobs: Vec<(usize, usize)> = (0..sets.len())
            .flat_map(|s| (0..segments.len()).map(move |g| (s, g)))
            .collect();
        let next = AtomicUsize::new(0);
        let done: Mutex<Vec<(usize, Vec<f64>)>> = Mutex::new(Vec::with_capacity(jobs.len()));
        std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .workers
                .iter()
                .enumerate()
                .map(|(index, worker)| {
                    let (jobs, next, done) = (&jobs, &next, &done);
                    scope.spawn(move || {
                        let Ok(mut replayer) = worker.lock() else {
                            self.fail(FitFault::WorkerPoisoned { worker: index });
                            return;
                        };
                        let mut mine = Vec::new();
                        while !stop.load(Ordering::Acquire)
                            && let Some(&(set, seg)) = jobs.get(next.fetch_add(1, Ordering::Relaxed))
                        {
                            mine.push((
                                set * segments.len() + seg,
                                self.segment_errors(&mut replayer, &sets[set], &segments[seg]),
                            ));
                            self.rollouts.fetch_add(1, Ordering::Relaxed);
                        }
                        done.lock().unwrap_or_else(PoisonError::into_inner).append(&mut mine);
                    })
                })
                .collect();
            for (index, handle) in handles.into_iter().enumerate() {
                if handle.join().is_err() {
                    self.fail(FitFault::WorkerPanicked { worker: index });
                }
            }
        });
        let mut done = done.into_inner().unwrap_or_else(PoisonError::into_inner);
        if self.fault.get().is_some() || done.len() < jobs.len() {
            return self.unusable(sets, segments);
        }
        done.sort_by_key(|d| d.0);
        let mut out = vec![Vec::new(); sets.len()];
        for (index, errors) in done {
            out[index / segments.len().max(1)].extend(errors);
        }
        out
    }

    /// Records `fault` unless an earlier one is recorded.
    fn fail(&self, fault: FitFault) {
        tracing::error!("identification: {fault}");
        let _ = self.fault.set(fault);
    }

    /// NaN errors shaped as [`Pool::errors`] gives them.
    fn unusable(&self, sets: &[Dynamics], segments: &[Segment]) -> Vec<Vec<f64>> {
        let per_set: usize = segments
            .iter()
            .map(|seg| 6 * compared(seg, self.strides[seg.recording]).count())
            .sum();
        vec![vec![f64::NAN; per_set]; sets.len()]
    }

    fn segment_errors(&self, replayer: &mut Replayer, dynamics: &Dynamics, seg: &Segment) -> Vec<f64> {
        let rec = &self.recordings[seg.recording];
        let stride = self.strides[seg.recording];
        let predicted = replayer.rollout(rec, seg, dynamics, stride);
        compared(seg, stride)
            .zip(predicted)
            .flat_map(|(k, p)| (0..6).map(move |j| p[j] - rec.readings[k].1[j]))
            .collect()
    }
}

/// Per joint RMS of errors laid out as [`Pool::errors`] gives them.
pub fn rms_per_joint(errors: &[f64]) -> [f64; 6] {
    let n = (errors.len() / 6).max(1) as f64;
    std::array::from_fn(|j| (errors.iter().skip(j).step_by(6).map(|e| e * e).sum::<f64>() / n).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{SynthOptions, record};
    use fakesim_twin::dynamics::Dynamics;

    /// A 2 s recording of the twin and its first second as one segment.
    fn recording() -> (Dynamics, Vec<Recording>, Segment) {
        let defaults = Replayer::new(ArmType::So101).unwrap().defaults(ArmType::So101).unwrap();
        let opts = SynthOptions {
            seconds: 2.0,
            ..SynthOptions::default()
        };
        let rec = record(ArmType::So101, &defaults, &opts).unwrap();
        let segment = Segment {
            recording: 0,
            first: 0,
            last: 100,
        };
        (defaults, vec![rec], segment)
    }

    #[test]
    fn a_worker_a_panic_left_unusable_faults_the_pool_and_no_error_reads_as_a_fit() {
        let (dynamics, recordings, segment) = recording();
        let pool = Pool::new(ArmType::So101, &recordings, 1).unwrap();
        let healthy = pool.errors(&[dynamics], &[segment]).swap_remove(0);
        assert!(!healthy.is_empty() && healthy.iter().all(|e| e.is_finite()));
        assert_eq!(pool.check(), Ok(()));

        std::thread::scope(|scope| {
            let poisoner = scope.spawn(|| {
                let _replayer = pool.workers[0].lock();
                panic!("a rollout failed");
            });
            assert!(poisoner.join().is_err());
        });
        let after = pool.errors(&[dynamics], &[segment]).swap_remove(0);
        assert_eq!(after.len(), healthy.len());
        assert!(after.iter().all(|e| e.is_nan()), "a faulted pool's errors are NaN");
        assert_eq!(pool.check(), Err(FitFault::WorkerPoisoned { worker: 0 }));
    }
}
