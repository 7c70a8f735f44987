//! The polish after the evolution strategy: Levenberg–Marquardt on every joint's five
//! parameters at once (so the coupling between joints is fitted too), the delays held on the
//! physics-step grid [`crate::fit`] put them on, with the Jacobian of every training error by
//! central differences, two rollouts per coordinate (the delays' too, for their standard errors).
//!
//! The strategies score a joint while the others' candidates vary too, which leaves them short
//! of the minimum; the replays are smooth in the parameters, so Gauss–Newton steps (each
//! accepted only if it lowers the replayed error) go on from there, and the last Jacobian gives
//! the standard errors.

use crate::fit::{bounds, coordinates, dynamics_at};
use crate::pool::Pool;
use crate::split::Segment;
use crate::spread;
use fakesim_twin::dynamics::Dynamics;
use fakesim_twin::joints::Joint;
use nalgebra::{DMatrix, DVector};

/// Coordinates in all (six per joint).
const N: usize = 36;
/// Relative move of a positive parameter for the differences (the replays are smooth in the
/// parameters at the physics step [`crate::replay::SUBSTEPS`] gives them).
const RELATIVE_STEP: f64 = 0.01;
/// Move of the delay for the differences (s).
const DELAY_STEP_S: f64 = 0.002;
/// Damping factors tried together after each Jacobian, relative to the current one.
const TRIALS: [f64; 3] = [0.1, 1.0, 10.0];
/// Bounds of the damping factor.
const MIN_DAMPING: f64 = 1e-9;
/// Above this the step is too short to matter and the polish ends.
const MAX_DAMPING: f64 = 1e6;
/// A round that lowers the squared error by less than this share ends the polish.
const TOLERANCE: f64 = 1e-4;

/// The polished fit and how well the recordings determine it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Refined {
    /// The fitted dynamics.
    pub dynamics: Dynamics,
    /// Standard errors per joint ([`spread::standard_errors`]).
    pub standard_errors: [[f64; 6]; 6],
    /// Jacobians computed (one per step taken, and the one at the end).
    pub jacobians: usize,
}

/// Polishes `start` on the training segments: at most `rounds` steps, each from a Jacobian,
/// and a last Jacobian where it ends for the standard errors.
pub fn refine(pool: &Pool<'_>, train: &[Segment], start: &Dynamics, rounds: usize) -> Refined {
    let mut u = coordinates(start);
    let mut lambda = 1e-3;
    let mut done = 0;
    let (residual, jac) = loop {
        let (residual, jac) = jacobian(pool, train, &u);
        done += 1;
        if done > rounds {
            break (residual, jac);
        }
        let cost = residual.norm_squared();
        let Some((next, lower)) = descend(pool, train, &jac, &residual, &u, &mut lambda) else {
            break (residual, jac);
        };
        u = next;
        if cost - lower < TOLERANCE * cost {
            break jacobian(pool, train, &u);
        }
    };
    Refined {
        dynamics: dynamics_at(&u),
        standard_errors: spread::standard_errors(&jac, &residual, &pool.rows(train)),
        jacobians: done,
    }
}

/// A step from `u` that lowers the squared error and that error, trying [`TRIALS`] damping
/// factors at once and raising the damping until one does (`None` when none does).
fn descend(
    pool: &Pool<'_>,
    train: &[Segment],
    jac: &DMatrix<f64>,
    residual: &DVector<f64>,
    u: &DVector<f64>,
    lambda: &mut f64,
) -> Option<(DVector<f64>, f64)> {
    let cost = residual.norm_squared();
    while *lambda <= MAX_DAMPING {
        let mut trials: Vec<DVector<f64>> = TRIALS.iter().map(|f| step(jac, residual, u, *lambda * f)).collect();
        let sets: Vec<Dynamics> = trials.iter().map(dynamics_at).collect();
        let costs: Vec<f64> = pool
            .errors(&sets, train)
            .iter()
            .map(|e| e.iter().map(|x| x * x).sum())
            .collect();
        let best = (0..costs.len()).min_by(|a, b| costs[*a].total_cmp(&costs[*b]))?;
        if costs[best] < cost {
            *lambda = (*lambda * TRIALS[best]).max(MIN_DAMPING);
            return Some((trials.swap_remove(best), costs[best]));
        }
        *lambda *= 100.0;
    }
    None
}

/// The errors at `u` and their Jacobian in the coordinates, by central differences over
/// [`RELATIVE_STEP`] either way (kept within the bounds).
fn jacobian(pool: &Pool<'_>, train: &[Segment], u: &DVector<f64>) -> (DVector<f64>, DMatrix<f64>) {
    let ends: Vec<(f64, f64)> = (0..N)
        .map(|i| {
            let b = bounds(Joint::ALL[i / 6])[i % 6];
            let h = if b.log {
                RELATIVE_STEP.ln_1p() / (b.hi / b.lo).ln()
            } else {
                DELAY_STEP_S / (b.hi - b.lo)
            };
            ((u[i] - h).max(0.0), (u[i] + h).min(1.0))
        })
        .collect();
    let mut sets = vec![dynamics_at(u)];
    for (i, &(lo, hi)) in ends.iter().enumerate() {
        for x in [lo, hi] {
            let mut moved = u.clone();
            moved[i] = x;
            sets.push(dynamics_at(&moved));
        }
    }
    let mut errors = pool.errors(&sets, train).into_iter();
    let base = DVector::from_vec(errors.next().unwrap_or_default());
    let mut jac = DMatrix::zeros(base.len(), N);
    for (i, &(lo, hi)) in ends.iter().enumerate() {
        let (below, above) = (errors.next().unwrap_or_default(), errors.next().unwrap_or_default());
        for row in 0..base.len().min(below.len()).min(above.len()) {
            jac[(row, i)] = (above[row] - below[row]) / (hi - lo).max(f64::EPSILON);
        }
    }
    (base, jac)
}

/// Whether coordinate `i` stays where it is: a delay (held where [`crate::fit`] put it on the
/// physics-step grid), or a coordinate at a bound that the error falls beyond (clamping a step
/// there would spoil the step in the others).
fn held(i: usize, u: f64, gradient: f64) -> bool {
    i % 6 == 5 || (u >= 1.0 && gradient < 0.0) || (u <= 0.0 && gradient > 0.0)
}

/// The damped Gauss–Newton step from `u` (Marquardt's scaling) in every coordinate not
/// [`held`], kept within [0, 1].
fn step(jac: &DMatrix<f64>, residual: &DVector<f64>, u: &DVector<f64>, lambda: f64) -> DVector<f64> {
    let mut a = jac.transpose() * jac;
    let mut g = jac.transpose() * residual;
    let floor = 1e-9 * a.diagonal().max().max(1e-300);
    let hold: Vec<usize> = (0..N).filter(|&i| held(i, u[i], g[i])).collect();
    for i in hold {
        a.row_mut(i).fill(0.0);
        a.column_mut(i).fill(0.0);
        g[i] = 0.0;
    }
    for i in 0..N {
        a[(i, i)] += lambda * a[(i, i)].max(floor) + floor;
    }
    let delta = a.cholesky().map_or_else(|| DVector::zeros(N), |c| c.solve(&(-g)));
    (u + delta).map(|x| x.clamp(0.0, 1.0))
}
