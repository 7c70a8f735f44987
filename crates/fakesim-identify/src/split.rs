//! The gate before a fit: recordings it cannot use are refused saying why; usable ones are cut
//! into segments, each replayed from its own measured start, and dealt into a training and a
//! validation part.

use crate::error::Unusable;
use crate::recording::Recording;
use fakesim_twin::joints::Joint;
use fakesim_twin::values::Bounds;

/// How recordings are cut and checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitOptions {
    /// Length of one segment (s).
    pub segment_s: f64,
    /// Every `validation_every`-th segment goes to validation (the rest to training).
    pub validation_every: usize,
    /// Least usable recording (s) in all.
    pub min_seconds: f64,
    /// Least travel of every joint (rad).
    pub min_travel_rad: f64,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            segment_s: 2.0,
            validation_every: 4,
            min_seconds: 6.0,
            min_travel_rad: 0.02,
        }
    }
}

/// A stretch of one recording replayed from its measured start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Index of the recording.
    pub recording: usize,
    /// First reading (its measured state starts the replay).
    pub first: usize,
    /// Last reading, inclusive.
    pub last: usize,
}

/// Segments of every recording, dealt into training and validation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Split {
    /// Segments the fit minimises the error on.
    pub train: Vec<Segment>,
    /// Segments the fit is judged on.
    pub validation: Vec<Segment>,
}

/// Share of readings beyond which a joint counts as saturated.
const SATURATED_SHARE: f64 = 0.2;
/// Load (percent) that counts as full.
const FULL_LOAD_PERCENT: f64 = 95.0;

/// Checks one recording against the twin's joint ranges; `Err` says why it cannot be used.
pub fn check(rec: &Recording, ranges: &[Bounds; 6], opts: &SplitOptions) -> Result<(), Unusable> {
    let times = rec.readings.iter().map(|r| r.0).chain(rec.goals.iter().map(|g| g.0));
    let values = rec.readings.iter().map(|r| r.1).chain(rec.goals.iter().map(|g| g.1));
    if times.clone().any(|t| !t.is_finite()) || values.flatten().any(|v| !v.is_finite()) {
        return Err(Unusable::Malformed(
            "a time or position that is not a finite number".into(),
        ));
    }
    let ordered = |t: &mut dyn Iterator<Item = f64>| {
        let v: Vec<f64> = t.collect();
        v.windows(2).all(|w| w[0] <= w[1])
    };
    if !ordered(&mut rec.readings.iter().map(|r| r.0)) || !ordered(&mut rec.goals.iter().map(|g| g.0)) {
        return Err(Unusable::Malformed("readings or goals out of time order".into()));
    }
    let n = rec.readings.len();
    if let Some(torque) = &rec.torque {
        let off = torque.iter().filter(|on| !**on).count();
        if off * 2 > n {
            let share = off as f64 / n.max(1) as f64;
            return Err(Unusable::TorqueOff {
                off_s: share * rec.duration(),
                total_s: rec.duration(),
            });
        }
    }
    let usable_s = rec.duration() * usable_share(rec);
    if usable_s < opts.min_seconds || n < 50 {
        return Err(Unusable::TooShort {
            seconds: usable_s,
            readings: n,
            need_s: opts.min_seconds,
        });
    }
    for joint in Joint::ALL {
        let j = joint.index();
        let (lo, hi) = rec
            .readings
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), r| (lo.min(r.1[j]), hi.max(r.1[j])));
        if hi - lo < opts.min_travel_rad {
            return Err(Unusable::NoMotion {
                joint: joint.label(),
                moved_rad: hi - lo,
                need_rad: opts.min_travel_rad,
            });
        }
        let r = ranges[j];
        let share = |count: usize, of: usize| count as f64 / of.max(1) as f64;
        let beyond = rec
            .goals
            .iter()
            .filter(|g| g.1[j] < r.lo - 0.01 || g.1[j] > r.hi + 0.01)
            .count();
        if share(beyond, rec.goals.len()) > SATURATED_SHARE {
            return Err(Unusable::Saturated {
                joint: joint.label(),
                what: "of its goals beyond its range",
                percent: 100.0 * share(beyond, rec.goals.len()),
            });
        }
        if let Some(load) = &rec.load {
            let full = load.iter().filter(|l| l[j].abs() >= FULL_LOAD_PERCENT).count();
            if share(full, n) > SATURATED_SHARE {
                return Err(Unusable::Saturated {
                    joint: joint.label(),
                    what: "of the readings at full load",
                    percent: 100.0 * share(full, n),
                });
            }
        }
    }
    Ok(())
}

/// Share of readings with torque on.
fn usable_share(rec: &Recording) -> f64 {
    match &rec.torque {
        Some(t) if !t.is_empty() => t.iter().filter(|on| **on).count() as f64 / t.len() as f64,
        _ => 1.0,
    }
}

/// Cuts checked recordings into segments of torque-on readings (a gap of ten reading periods
/// or torque off ends a run) and deals them: every `validation_every`-th to validation.
pub fn split(recordings: &[Recording], opts: &SplitOptions) -> Split {
    let mut out = Split::default();
    let mut count = 0usize;
    for (index, rec) in recordings.iter().enumerate() {
        let gap = 10.0 * rec.reading_period();
        let on = |k: usize| rec.torque.as_ref().is_none_or(|t| t.get(k).copied().unwrap_or(true));
        let mut first: Option<usize> = None;
        for k in 0..rec.readings.len() {
            let broken = !on(k) || (k > 0 && rec.readings[k].0 - rec.readings[k - 1].0 > gap);
            if broken {
                first = on(k).then_some(k);
                continue;
            }
            let start = *first.get_or_insert(k);
            if rec.readings[k].0 - rec.readings[start].0 >= opts.segment_s {
                // End (and start the next) where the arm moves least nearby: a replay starts
                // best from a measured state whose velocity matters little.
                let last = rec.readings.len().saturating_sub(2);
                let end = stillest(rec, k.min(last), (k + (k - start) / 4).min(last));
                let segment = Segment {
                    recording: index,
                    first: start,
                    last: end,
                };
                count += 1;
                if count.is_multiple_of(opts.validation_every.max(2)) {
                    out.validation.push(segment);
                } else {
                    out.train.push(segment);
                }
                first = Some(end);
            }
        }
    }
    out
}

/// The reading in `from..=to` (within one run) where the joints move least, by the summed
/// speed between its neighbours.
fn stillest(rec: &Recording, from: usize, to: usize) -> usize {
    let speed = |k: usize| {
        let (a, b) = (&rec.readings[k.saturating_sub(1)], &rec.readings[k + 1]);
        (0..6).map(|j| (b.1[j] - a.1[j]).abs()).sum::<f64>() / (b.0 - a.0).max(1e-9)
    };
    (from..=to.max(from))
        .min_by(|a, b| speed(*a).total_cmp(&speed(*b)))
        .unwrap_or(from)
}
