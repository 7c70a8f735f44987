//! The fit: each joint's six parameters within bounds from the servo's data and the published
//! fits, by CMA-ES (the `cmaes` crate), one evolution strategy per joint run in lock step.
//!
//! From the defaults the error is far from quadratic in the parameters (a servo that saturates
//! or sticks responds to some of them only in parts of a recording), which can stall
//! derivative-based least squares; an evolution strategy only ranks candidates. The parameters
//! are mapped onto [0, 1] between their bounds (log-scaled for the positive ones), with a
//! penalty beyond them. Each generation's k-th candidates of the six joints' strategies are
//! replayed together in one rollout, and each strategy is told its own joint's error, so six
//! 6-parameter searches cost what one would. The other joints' candidates move a joint's error
//! too (the arm couples them), which a strategy sees as noise: each ends at the mean of its
//! last generation rather than its luckiest candidate, and [`crate::refine`] then fits every
//! joint's parameters together. Asked to ([`FitOptions::batches`], off by default), the second
//! run of the strategies, from near the minimum, scores each generation on one part of the
//! training segments in turn ([`crate::batch`]) but for its last fifth, which meets them all, as
//! every other stage does.

use crate::batch;
use crate::board::{Search, strategies};
use crate::pool::rms_per_joint;
use crate::train::{Halt, Training, cost};
use fakesim_twin::dynamics::{Dynamics, JointDynamics};
use fakesim_twin::joints::Joint;
use nalgebra::DVector;

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
    /// Generations of each joint's strategy (each generation is `population` rollouts of the
    /// training part).
    pub generations: usize,
    /// Candidates per generation.
    pub population: usize,
    /// Parts the training segments are dealt into for the second run of the strategies: each
    /// generation scores its candidates on one part, the next part the next generation, the
    /// last fifth of the generations on every segment (1: every segment every generation).
    pub batches: usize,
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
            batches: 1,
            seed: 1,
            rounds: 4,
        }
    }
}

/// The dynamics at coordinates `u` (joint by joint, six each).
pub fn dynamics_at(u: &DVector<f64>) -> Dynamics {
    Dynamics {
        joints: std::array::from_fn(|j| {
            let b = bounds(Joint::ALL[j]);
            JointDynamics::from_values(std::array::from_fn(|m| b[m].value(u[6 * j + m])))
        }),
    }
}

/// The coordinates of `dynamics`.
pub fn coordinates(dynamics: &Dynamics) -> DVector<f64> {
    DVector::from_fn(36, |i, _| {
        bounds(Joint::ALL[i / 6])[i % 6].coordinate(dynamics.joints[i / 6].values()[i % 6])
    })
}

/// Delays (s) tried before the strategies start.
const COARSE_DELAYS_S: [f64; 7] = [0.0, 0.01, 0.02, 0.03, 0.045, 0.06, 0.08];
/// Longest delay of the finer grid (s), whose delays are the replays' physics steps apart.
const FINE_DELAY_MAX_S: f64 = 0.08;

/// `start` with each joint's delay set to the one of `grid` that fits it best.
fn best_delays(t: &Training<'_>, start: &Dynamics, grid: &[f64]) -> Dynamics {
    let sets: Vec<Dynamics> = grid
        .iter()
        .map(|&delay| {
            let mut d = *start;
            d.joints.iter_mut().for_each(|j| j.delay_s = delay);
            d
        })
        .collect();
    let rms: Vec<[f64; 6]> = t.errors(&sets).iter().map(|e| rms_per_joint(e)).collect();
    let mut out = *start;
    for (j, joint) in out.joints.iter_mut().enumerate() {
        let best = (0..sets.len())
            .min_by(|a, b| rms[*a][j].total_cmp(&rms[*b][j]))
            .unwrap_or(0);
        joint.delay_s = grid[best];
    }
    out
}

/// Fits the dynamics on the training segments from `start`: each joint's delay picked from a
/// coarse grid, the strategies from there, the delays picked again from a finer grid around
/// what they found (a delay trades off against the other parameters, and a strategy started on
/// the wrong side of that trade stays there), the strategies once more with shorter steps, and
/// the delays put back on that grid (picked again, or rounded, whichever fits better). The
/// finer grid is the replays' physics steps: a goal acts from a step on, so the replays move by
/// whole steps' worth of motion as a delay crosses a step (a goal jump of a radian saturates
/// the servo however little of a step it acts), and between steps only the whole steps are
/// told apart reliably; [`crate::refine`] keeps them.
pub(crate) fn fit(t: &Training<'_>, start: &Dynamics, opts: &FitOptions) -> Result<Dynamics, Halt> {
    // Scores generation `generation` of a stage whose generations from `whole_from` on meet
    // every segment.
    let scorer = |whole_from: usize| {
        move |u: &DVector<f64>, generation: usize| {
            let errors = if generation >= whole_from || opts.batches <= 1 {
                t.errors(&[dynamics_at(u)])
            } else {
                t.errors_of(&[dynamics_at(u)], &batch::part(t.segments(), opts.batches, generation))
            };
            rms_per_joint(&errors[0]).map(|r| r * r)
        }
    };
    t.stage("coarse delays");
    let first = best_delays(t, start, &COARSE_DELAYS_S);
    t.check()?;
    let search = Search {
        sigma: INITIAL_STEP,
        population: opts.population,
        generations: opts.generations,
        seed: opts.seed,
    };
    t.stage("strategies");
    // The first run on every segment: scored on parts, a strategy may settle in the basin of one
    // part's best (measured: the elbow's, at its stiffness bound, in most runs).
    let rough = strategies(scorer(0), &coordinates(&first), search)?;
    t.check()?;
    let step = t.timestep().max(1e-4);
    let fine: Vec<f64> = (0..=(FINE_DELAY_MAX_S / step).round() as usize)
        .map(|k| step * k as f64)
        .collect();
    t.stage("fine delays");
    let again = best_delays(t, &dynamics_at(&rough), &fine);
    t.check()?;
    let second = Search {
        sigma: INITIAL_STEP / 3.0,
        generations: opts.generations.div_ceil(2),
        seed: opts.seed.wrapping_add(6),
        ..search
    };
    t.stage("strategies again");
    let polished = strategies(
        scorer(batch::whole_from(second.generations)),
        &coordinates(&again),
        second,
    )?;
    t.check()?;
    // Each joint's pick on the grid is made with the others' delays moved alike, so it may not
    // suit them together: keep it only if it beats the strategies' own delays put on the grid.
    t.stage("delays on the grid");
    let found = dynamics_at(&polished);
    let mut snapped = found;
    for joint in &mut snapped.joints {
        joint.delay_s = step * (joint.delay_s / step).round();
    }
    let picked = best_delays(t, &found, &fine);
    let costs: Vec<f64> = t.errors(&[snapped, picked]).iter().map(|e| cost(e)).collect();
    t.check()?;
    Ok(if costs[1] < costs[0] { picked } else { snapped })
}

/// The strategies' first step size, in coordinates (a tenth of each parameter's range).
const INITIAL_STEP: f64 = 0.1;
