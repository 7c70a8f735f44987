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
//! joint's parameters together.

use crate::pool::{Pool, rms_per_joint};
use crate::split::Segment;
use cmaes::{CMAESOptions, DVector as EsVector};
use fakesim_twin::dynamics::{Dynamics, JointDynamics};
use fakesim_twin::joints::Joint;
use nalgebra::DVector;
use std::sync::{Condvar, Mutex};

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
fn best_delays(pool: &Pool<'_>, train: &[Segment], start: &Dynamics, grid: &[f64]) -> Dynamics {
    let sets: Vec<Dynamics> = grid
        .iter()
        .map(|&delay| {
            let mut d = *start;
            d.joints.iter_mut().for_each(|j| j.delay_s = delay);
            d
        })
        .collect();
    let rms: Vec<[f64; 6]> = pool.errors(&sets, train).iter().map(|e| rms_per_joint(e)).collect();
    let mut out = *start;
    for (j, joint) in out.joints.iter_mut().enumerate() {
        let best = (0..sets.len())
            .min_by(|a, b| rms[*a][j].total_cmp(&rms[*b][j]))
            .unwrap_or(0);
        joint.delay_s = grid[best];
    }
    out
}

/// Where the six strategies meet: each posts its candidate and waits until all six (or the
/// final points of those that finished) are in, then one rollout scores them all.
struct Board<'p, 'a> {
    pool: &'p Pool<'a>,
    train: &'p [Segment],
    state: Mutex<Round>,
    turn: Condvar,
}

/// One round of the board.
struct Round {
    /// Candidates posted this round.
    posted: [Option<[f64; 6]>; 6],
    /// Final points of strategies that have finished.
    finished: [Option<[f64; 6]>; 6],
    /// Rounds scored so far.
    scored: u64,
    /// Each joint's mean squared error in the last scored round.
    scores: [f64; 6],
}

/// Penalty per squared coordinate beyond a bound (a coordinate is a parameter's whole range).
const PENALTY: f64 = 1.0;

impl Board<'_, '_> {
    /// Posts joint `j`'s candidate and returns its mean squared error once the round is scored.
    fn score(&self, j: usize, x: [f64; 6]) -> f64 {
        let Ok(mut round) = self.state.lock() else {
            return f64::MAX;
        };
        round.posted[j] = Some(x);
        let mine = round.scored;
        self.score_if_full(&mut round);
        while round.scored == mine {
            round = match self.turn.wait(round) {
                Ok(r) => r,
                Err(_) => return f64::MAX,
            };
        }
        let beyond: f64 = x.iter().map(|u| (u - u.clamp(0.0, 1.0)).powi(2)).sum();
        round.scores[j] * (1.0 + PENALTY * beyond)
    }

    /// Records joint `j`'s final point; the others no longer wait for it.
    fn finish(&self, j: usize, x: [f64; 6]) {
        if let Ok(mut round) = self.state.lock() {
            round.finished[j] = Some(x);
            self.score_if_full(&mut round);
        }
    }

    /// Scores the round when every joint has posted or finished (and one has posted).
    fn score_if_full(&self, round: &mut Round) {
        let full = (0..6).all(|j| round.posted[j].is_some() || round.finished[j].is_some());
        if !full || round.posted.iter().all(Option::is_none) {
            return;
        }
        let u = DVector::from_fn(36, |i, _| {
            let (j, m) = (i / 6, i % 6);
            round.posted[j].or(round.finished[j]).map_or(0.5, |x| x[m])
        });
        let errors = self.pool.errors(&[dynamics_at(&u)], self.train).swap_remove(0);
        round.scores = rms_per_joint(&errors).map(|r| r * r);
        round.posted = [None; 6];
        round.scored += 1;
        self.turn.notify_all();
    }
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
pub fn fit(pool: &Pool<'_>, train: &[Segment], start: &Dynamics, opts: &FitOptions) -> Dynamics {
    let first = best_delays(pool, train, start, &COARSE_DELAYS_S);
    let rough = strategies(pool, train, &coordinates(&first), opts, INITIAL_STEP, opts.seed);
    let step = pool.timestep().max(1e-4);
    let fine: Vec<f64> = (0..=(FINE_DELAY_MAX_S / step).round() as usize)
        .map(|k| step * k as f64)
        .collect();
    let again = best_delays(pool, train, &dynamics_at(&rough), &fine);
    let second = FitOptions {
        generations: opts.generations.div_ceil(2),
        ..*opts
    };
    let polished = strategies(
        pool,
        train,
        &coordinates(&again),
        &second,
        INITIAL_STEP / 3.0,
        opts.seed.wrapping_add(6),
    );
    // Each joint's pick on the grid is made with the others' delays moved alike, so it may not
    // suit them together: keep it only if it beats the strategies' own delays put on the grid.
    let found = dynamics_at(&polished);
    let mut snapped = found;
    for joint in &mut snapped.joints {
        joint.delay_s = step * (joint.delay_s / step).round();
    }
    let picked = best_delays(pool, train, &found, &fine);
    let cost = |e: &Vec<f64>| e.iter().map(|x| x * x).sum::<f64>();
    let costs: Vec<f64> = pool.errors(&[snapped, picked], train).iter().map(cost).collect();
    if costs[1] < costs[0] { picked } else { snapped }
}

/// Runs the six joints' strategies from `u0` with first step `sigma`; each ends at the mean of
/// its last generation (on a cost this rough the best single candidate is partly luck).
fn strategies(
    pool: &Pool<'_>,
    train: &[Segment],
    u0: &DVector<f64>,
    opts: &FitOptions,
    sigma: f64,
    seed: u64,
) -> DVector<f64> {
    let board = Board {
        pool,
        train,
        state: Mutex::new(Round {
            posted: [None; 6],
            finished: [None; 6],
            scored: 0,
            scores: [0.0; 6],
        }),
        turn: Condvar::new(),
    };
    let mut best = u0.clone();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..6)
            .map(|j| {
                let board = &board;
                let mean: Vec<f64> = (0..6).map(|m| u0[6 * j + m]).collect();
                scope.spawn(move || {
                    let objective = |x: &EsVector<f64>| board.score(j, std::array::from_fn(|m| x[m]));
                    let fallback: [f64; 6] = std::array::from_fn(|m| mean[m]);
                    let point = CMAESOptions::new(mean, sigma)
                        .population_size(opts.population.max(4))
                        .max_generations(opts.generations.max(1))
                        .seed(seed.wrapping_add(j as u64))
                        .build(objective)
                        .ok()
                        .map_or(fallback, |mut es| {
                            es.run();
                            std::array::from_fn(|m| es.mean()[m].clamp(0.0, 1.0))
                        });
                    board.finish(j, point);
                    point
                })
            })
            .collect();
        for (j, handle) in handles.into_iter().enumerate() {
            if let Ok(point) = handle.join() {
                (0..6).for_each(|m| best[6 * j + m] = point[m]);
            }
        }
    });
    best
}

/// The strategies' first step size, in coordinates (a tenth of each parameter's range).
const INITIAL_STEP: f64 = 0.1;
