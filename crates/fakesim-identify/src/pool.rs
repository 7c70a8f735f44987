//! Rollouts spread over worker threads, each with a twin model of its own, and the position
//! errors they leave against the recordings.

use crate::recording::Recording;
use crate::replay::{Replayer, compared};
use crate::split::Segment;
use fakesim_twin::dynamics::Dynamics;
use fakesim_twin::{ArmType, TwinError};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Fastest rate (Hz) a rollout is compared with the readings at; faster readings are thinned.
const COMPARE_HZ: f64 = 100.0;

/// The recordings and the worker threads that replay them.
pub struct Pool<'a> {
    recordings: &'a [Recording],
    strides: Vec<usize>,
    workers: Vec<Mutex<Replayer>>,
    timestep: f64,
    rollouts: AtomicUsize,
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

    /// The physics step of the replays (s).
    pub fn timestep(&self) -> f64 {
        self.timestep
    }

    /// The recordings replayed.
    pub fn recordings(&self) -> &[Recording] {
        self.recordings
    }

    /// Position errors (predicted − measured, rad) of every segment under each of `sets`:
    /// one vector per set, segment by segment, compared reading by reading, joint by joint.
    pub fn errors(&self, sets: &[Dynamics], segments: &[Segment]) -> Vec<Vec<f64>> {
        let jobs: Vec<(usize, usize)> = (0..sets.len())
            .flat_map(|s| (0..segments.len()).map(move |g| (s, g)))
            .collect();
        let next = AtomicUsize::new(0);
        let done: Mutex<Vec<(usize, Vec<f64>)>> = Mutex::new(Vec::with_capacity(jobs.len()));
        std::thread::scope(|scope| {
            for worker in &self.workers {
                let (jobs, next, done) = (&jobs, &next, &done);
                scope.spawn(move || {
                    let Ok(mut replayer) = worker.lock() else { return };
                    let mut mine = Vec::new();
                    while let Some(&(set, seg)) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                        mine.push((
                            set * segments.len() + seg,
                            self.segment_errors(&mut replayer, &sets[set], &segments[seg]),
                        ));
                    }
                    if let Ok(mut done) = done.lock() {
                        done.append(&mut mine);
                    }
                });
            }
        });
        self.rollouts.fetch_add(jobs.len(), Ordering::Relaxed);
        let mut done = done.into_inner().unwrap_or_default();
        done.sort_by_key(|d| d.0);
        let mut out = vec![Vec::new(); sets.len()];
        for (index, errors) in done {
            out[index / segments.len().max(1)].extend(errors);
        }
        out
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
