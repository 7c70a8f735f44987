//! The fit: each joint's six parameters within bounds from the servo's data and the published
//! fits, searched by CMA-ES (the `cmaes` crate) on each joint replayed alone ([`crate::solo`]),
//! then its delays put on the replays' grid on the whole arm.
//!
//! From the defaults the error is far from quadratic in the parameters (a servo that saturates
//! or sticks responds to some of them only in parts of a recording), which can stall
//! derivative-based least squares; an evolution strategy only ranks candidates. The parameters
//! are mapped onto [0, 1] between their bounds (log-scaled for the positive ones), with a
//! penalty beyond them. A joint alone costs a small share of a rollout of the arm and its error
//! depends on its own parameters only, so each joint runs [`FitOptions::runs`] strategies of its
//! own from the start, with different seeds and wider first steps, and keeps the best point
//! any of them scored ([`crate::search`]): a single strategy can settle in another valley
//! (measured: the known truth's wrist_roll, stiff and ringing against its torque limit, in one
//! run of four).
//! [`crate::refine`] then fits every joint's parameters together on the arm.

use crate::error::FitFault;
use crate::pool::rms_per_joint;
use crate::search::{self, Point, Strategies};
use crate::solo::Solo;
use crate::train::{Halt, Training, cost};
use fakesim_twin::dynamics::{Dynamics, JointDynamics};
use fakesim_twin::joints::Joint;
use nalgebra::DVector;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// One parameter's bounds; `log` maps it on a logarithmic scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// Smallest value.
    pub lo: f64,
    /// Largest value.
    pub hi: f64,
    /// Whether the scale between them is logarithmic.
    pub log: bool,
}

impl Bound {
    const fn log(lo: f64, hi: f64) -> Self {
        Bound { lo, hi, log: true }
    }

    /// The value at coordinate `u`: 0 at `lo`, 1 at `hi`, held at the bound beyond them.
    fn value(&self, u: f64) -> f64 {
        let s = u.clamp(0.0, 1.0);
        if self.log {
            self.lo * (self.hi / self.lo).powf(s)
        } else {
            self.lo + (self.hi - self.lo) * s
        }
    }

    /// The coordinate of `p`, within [0, 1].
    fn coordinate(&self, p: f64) -> f64 {
        let s = if self.log {
            (p / self.lo).ln() / (self.hi / self.lo).ln()
        } else {
            (p - self.lo) / (self.hi - self.lo)
        };
        s.clamp(0.0, 1.0)
    }
}

/// The bounds of a joint's parameters ([`fakesim_twin::dynamics::PARAMETERS`] order): wide
/// enough for Menagerie's defaults, Rhoban's bench fits at 7.4 and 12 V, MuJoCo Playground's
/// armature and the older 17.8 N·m/rad stiffness; the gripper's friction may go higher (the
/// published gripper fit has 0.25 N·m).
pub fn bounds(joint: Joint) -> [Bound; 6] {
    let friction_hi = if joint == Joint::Gripper { 2.0 } else { 1.0 };
    [
        Bound::log(10.0, 5000.0),
        Bound::log(0.01, 5.0),
        Bound::log(0.002, 0.5),
        Bound::log(0.001, friction_hi),
        Bound::log(0.3, 10.0),
        Bound {
            lo: 0.0,
            hi: 0.1,
            log: false,
        },
    ]
}

/// How far the fit may go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FitOptions {
    /// Generations of each joint's strategies (each generation is `population` replays of the
    /// joint alone).
    pub generations: usize,
    /// Candidates per generation.
    pub population: usize,
    /// Strategies per joint, each from the start with its own seed and a wider first step.
    pub runs: usize,
    /// Seed of the strategies (runs are repeatable).
    pub seed: u64,
    /// Most Levenberg–Marquardt rounds of each polish after the strategies, the fit's and
    /// every profile's ([`crate::refine`]; each is 9–11 rollouts of the training part, and a
    /// few more).
    pub rounds: usize,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            generations: 100,
            population: 16,
            runs: 4,
            seed: 1,
            rounds: 4,
        }
    }
}

/// The dynamics at coordinates `u` (joint by joint, six each).
pub fn dynamics_at(u: &DVector<f64>) -> Dynamics {
    Dynamics {
        joints: std::array::from_fn(|j| joint_at(j, |m| u[6 * j + m])),
    }
}

/// Joint `j`'s parameters at its coordinates `u(0)`, …, `u(5)`.
fn joint_at(j: usize, u: impl Fn(usize) -> f64) -> JointDynamics {
    let b = bounds(Joint::ALL[j]);
    JointDynamics::from_values(std::array::from_fn(|m| b[m].value(u(m))))
}

/// The coordinates of `dynamics`.
pub fn coordinates(dynamics: &Dynamics) -> DVector<f64> {
    DVector::from_fn(36, |i, _| {
        bounds(Joint::ALL[i / 6])[i % 6].coordinate(dynamics.joints[i / 6].values()[i % 6])
    })
}

/// `start` with each joint's parameters searched alone on `solo` ([`search::each_joint`]),
/// the search's replays and its best error so far reported to `t`'s progress; what it found is
/// scored on the arm, so that a fit interrupted here ends with it if it is better.
fn alone(t: &Training<'_>, solo: &Solo<'_>, start: &Dynamics, opts: &FitOptions) -> Result<Dynamics, FitFault> {
    let u = coordinates(start);
    let from: [Point; 6] = std::array::from_fn(|j| std::array::from_fn(|m| u[6 * j + m]));
    let replays = AtomicUsize::new(0);
    let best = Mutex::new(solo.costs(start));
    let rms = |costs: &[f64; 6]| (costs.iter().sum::<f64>() / 6.0).sqrt();
    let cost = |j: usize, x: &Point| {
        let c = solo.cost(j, &joint_at(j, |m| x[m]));
        let mut best = best.lock().unwrap_or_else(PoisonError::into_inner);
        best[j] = best[j].min(c);
        if replays.fetch_add(1, Ordering::Relaxed).is_multiple_of(REPORT_EVERY) {
            t.report_alone(replays.load(Ordering::Relaxed), rms(&best));
        }
        c
    };
    let strategies = Strategies {
        generations: opts.generations,
        population: opts.population,
        runs: opts.runs,
        seed: opts.seed,
    };
    let found = search::each_joint(&cost, &from, &strategies, t.threads(), t.stop_flag())?;
    let best = best.into_inner().unwrap_or_else(PoisonError::into_inner);
    t.report_alone(replays.into_inner(), rms(&best));
    let found = Dynamics {
        joints: std::array::from_fn(|j| joint_at(j, |m| found[j][m])),
    };
    t.keep(&found);
    Ok(found)
}

/// Replays of a joint alone between two reports of the search's progress.
const REPORT_EVERY: usize = 256;

/// Delays (s) tried before the strategies start.
const COARSE_DELAYS_S: [f64; 7] = [0.0, 0.01, 0.02, 0.03, 0.045, 0.06, 0.08];
/// Longest delay of the finer grid (s), whose delays are the replays' physics steps apart.
const FINE_DELAY_MAX_S: f64 = 0.08;

/// `start` with each joint's delay set to the one of `grid` that fits the joint best alone.
fn coarse_delays(solo: &Solo<'_>, start: &Dynamics) -> Dynamics {
    let sets: Vec<Dynamics> = COARSE_DELAYS_S.iter().map(|&delay| with_delays(start, delay)).collect();
    let costs: Vec<[f64; 6]> = sets.iter().map(|d| solo.costs(d)).collect();
    with_lowest(start, &COARSE_DELAYS_S, &costs)
}

/// `start` with each joint's delay set to the one of `grid` that fits it best on the arm.
fn best_delays(t: &Training<'_>, start: &Dynamics, grid: &[f64]) -> Dynamics {
    let sets: Vec<Dynamics> = grid.iter().map(|&delay| with_delays(start, delay)).collect();
    let rms: Vec<[f64; 6]> = t.errors(&sets).iter().map(|e| rms_per_joint(e)).collect();
    with_lowest(start, grid, &rms)
}

/// `start` with every joint's delay `delay` (s).
fn with_delays(start: &Dynamics, delay: f64) -> Dynamics {
    let mut d = *start;
    d.joints.iter_mut().for_each(|j| j.delay_s = delay);
    d
}

/// `start` with each joint's delay the one of `grid` whose `errors` (per delay, per joint) are
/// the joint's lowest.
fn with_lowest(start: &Dynamics, grid: &[f64], errors: &[[f64; 6]]) -> Dynamics {
    let mut out = *start;
    for (j, joint) in out.joints.iter_mut().enumerate() {
        let best = (0..errors.len().min(grid.len()))
            .min_by(|a, b| errors[*a][j].total_cmp(&errors[*b][j]))
            .unwrap_or(0);
        joint.delay_s = grid[best];
    }
    out
}

/// Fits the dynamics on the training segments from `start`, each joint alone on `solo` first:
/// each joint's delay picked from a coarse grid, the strategies from there, then on the arm
/// the delays put on the replays' grid (picked again on it, or rounded, whichever fits
/// better). The grid is the replays' physics steps: a goal acts from a step on, so the replays
/// move by whole steps' worth of motion as a delay crosses a step (a goal jump of a radian
/// saturates the servo however little of a step it acts), and between steps only the whole
/// steps are told apart reliably; [`crate::refine`] keeps them.
pub(crate) fn fit(t: &Training<'_>, solo: &Solo<'_>, start: &Dynamics, opts: &FitOptions) -> Result<Dynamics, Halt> {
    t.check()?;
    let first = coarse_delays(solo, start);
    let found = alone(t, solo, &first, opts)?;
    t.check()?;
    // Each joint's pick on the grid is made with the others' delays moved alike, so it may not
    // suit them together: keep it only if it beats the strategies' own delays put on the grid.
    t.stage("delays on the grid");
    let step = t.timestep().max(1e-4);
    let grid: Vec<f64> = (0..=(FINE_DELAY_MAX_S / step).round() as usize)
        .map(|k| step * k as f64)
        .collect();
    let mut snapped = found;
    for joint in &mut snapped.joints {
        joint.delay_s = step * (joint.delay_s / step).round();
    }
    let picked = best_delays(t, &found, &grid);
    let costs: Vec<f64> = t.errors(&[snapped, picked]).iter().map(|e| cost(e)).collect();
    t.check()?;
    Ok(if costs[1] < costs[0] { picked } else { snapped })
}
