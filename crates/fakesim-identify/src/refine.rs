//! The polish after the evolution strategy: Levenberg–Marquardt on each joint's parameters,
//! the delays held on the physics-step grid [`crate::fit`] put them on, with each joint's
//! block of the Jacobian by central differences, two rollouts per parameter for all six joints
//! (see [`jacobian`]). When asked, [`crate::profile`] then moves each parameter either way,
//! polishes the rest again there, and says how well the recordings determine it.
//!
//! The strategies score a joint while the others' candidates vary too, which leaves them short
//! of the minimum; Gauss–Newton steps (each kept only if it lowers the replayed error) go on
//! from there. The replayed error is rough in the parameters below a few percent (a
//! saturating servo's replay moves by whole physics steps' worth of motion), so the
//! differences span ±5 %, a slope over the scale on which it is smooth, and each joint steps
//! and is judged on its own errors: one joint whose error is rough then holds back no other.
//! Where the error runs along a valley (a joint's damping, armature and torque limit grown
//! together move it alike while the servo saturates) the Gauss–Newton step falls short, so
//! the step stretched 2.5 and 6 times is tried beside it.
//!
//! Hand-written, not a maintained crate: the `levenberg-marquardt` crate (the one maintained
//! nalgebra-based implementation) takes one residual function evaluated one point at a time,
//! has no bounds and one damping factor for the whole problem, while this polish needs the
//! bounds of the coordinates, a damping factor and an accepted step per joint (six problems
//! coupled only weakly through the arm), and every trial of a round rolled out at once across
//! the cores; a bounded derivative-free method (BOBYQA) would need some 40 rollouts of the
//! training part per joint to build its first model where a Jacobian here costs 11 for all six.
//! The unit tests below check it on a known quadratic and a known bounded minimum.

use crate::fit::{bounds, dynamics_at};
use crate::train::Training;
use fakesim_twin::dynamics::Dynamics;
use fakesim_twin::joints::Joint;
use nalgebra::{DMatrix, DVector};

/// Coordinates in all (six per joint).
const N: usize = 36;
/// Joints, each with a block of six coordinates.
pub(crate) const JOINTS: usize = N / 6;
/// Index of the delay among a joint's six parameters.
pub(crate) const DELAY: usize = 5;
/// Relative move of a positive parameter for the differences (see the module's doc).
const RELATIVE_STEP: f64 = 0.05;
/// Move of the delay for the differences (s).
const DELAY_STEP_S: f64 = 0.002;
/// Steps tried together after each Jacobian: the damping factor relative to the current one,
/// and how far along the step to go.
const TRIALS: [(f64, f64); 5] = [(0.1, 1.0), (1.0, 1.0), (10.0, 1.0), (1.0, 2.5), (1.0, 6.0)];
/// Bounds of the damping factor.
const MIN_DAMPING: f64 = 1e-9;
/// Above this the step is too short to matter and the polish ends.
const MAX_DAMPING: f64 = 1e6;
/// A round that lowers the squared error by less than this share ends the polish.
const TOLERANCE: f64 = 1e-4;

/// What the polish lowers: the errors at each of several points in the coordinates, laid out as
/// [`crate::pool::Pool::errors`] gives them (joint `j`'s at rows `j`, `j + JOINTS`, …).
pub(crate) trait Residuals {
    /// The errors at each of `points`, in order.
    fn at(&self, points: &[DVector<f64>]) -> Vec<Vec<f64>>;
}

impl Residuals for Training<'_> {
    fn at(&self, points: &[DVector<f64>]) -> Vec<Vec<f64>> {
        let sets: Vec<Dynamics> = points.iter().map(dynamics_at).collect();
        self.errors(&sets)
    }
}

/// A joint's parameters a polish holds while parameter `m` is profiled: `m` and the delay.
pub(crate) fn held_parameters(m: usize) -> [bool; 6] {
    std::array::from_fn(|k| k == m || k == DELAY)
}

/// Where a polish ended: the coordinates and their errors.
pub(crate) struct Polished {
    /// The coordinates (six per joint).
    pub u: DVector<f64>,
    /// The training errors there.
    pub residual: DVector<f64>,
}

impl Polished {
    /// The squared error over every joint.
    pub fn cost(&self) -> f64 {
        self.residual.norm_squared()
    }

    /// Each joint's squared error.
    pub fn joint_costs(&self) -> [f64; JOINTS] {
        joint_costs(self.residual.as_slice())
    }
}

/// Levenberg–Marquardt from `u`, every joint's parameters marked in `held` held: at most
/// `rounds` steps, each from a Jacobian.
pub(crate) fn polish(t: &impl Residuals, mut u: DVector<f64>, rounds: usize, held: [bool; 6]) -> Polished {
    let mut lambda = [1e-3; JOINTS];
    let mut residual = None;
    for _ in 0..rounds {
        let (at_u, jac) = jacobian(t, &u, held);
        let cost = at_u.norm_squared();
        let Some((next, there)) = descend(t, (&jac, &at_u), &u, &mut lambda, held) else {
            residual = Some(at_u);
            break;
        };
        u = next;
        let lower = there.norm_squared();
        residual = Some(there);
        if cost - lower < TOLERANCE * cost {
            break;
        }
    }
    let residual = residual.unwrap_or_else(|| DVector::from_vec(t.at(std::slice::from_ref(&u)).swap_remove(0)));
    Polished { u, residual }
}

/// Each joint's sum of squared errors, from errors laid out as [`crate::pool::Pool::errors`] gives them.
pub(crate) fn joint_costs(errors: &[f64]) -> [f64; JOINTS] {
    std::array::from_fn(|j| errors.iter().skip(j).step_by(JOINTS).map(|e| e * e).sum())
}

/// A step from `u` that lowers the squared error, and the errors there (`None` when no
/// joint's does). Each joint steps on its own block of the Jacobian with its own damping factor
/// and keeps the step only if its own error falls. Each round rolls out the [`TRIALS`] at once,
/// every joint still looking stepping in each; a joint none of whose trials lowers its error
/// tries again with more damping.
fn descend(
    t: &impl Residuals,
    (jac, residual): (&DMatrix<f64>, &DVector<f64>),
    u: &DVector<f64>,
    lambda: &mut [f64; JOINTS],
    held: [bool; 6],
) -> Option<(DVector<f64>, DVector<f64>)> {
    let before = joint_costs(residual.as_slice());
    let blocks: Vec<(DMatrix<f64>, DVector<f64>)> = (0..JOINTS).map(|j| normal_block(jac, residual, j)).collect();
    let mut next = u.clone();
    let mut open: Vec<usize> = (0..JOINTS).collect();
    let mut moved = Vec::new();
    while !open.is_empty() {
        let trials: Vec<DVector<f64>> = TRIALS
            .iter()
            .map(|(f, stretch)| {
                let mut trial = next.clone();
                for &j in &open {
                    let (a, g) = &blocks[j];
                    let block = step((a, g), u, j, lambda[j] * f, *stretch, held);
                    trial.rows_mut(6 * j, 6).copy_from(&block);
                }
                trial
            })
            .collect();
        let costs: Vec<[f64; JOINTS]> = t.at(&trials).iter().map(|e| joint_costs(e)).collect();
        let mut still = Vec::new();
        for &j in &open {
            let best = (0..costs.len()).min_by(|a, b| costs[*a][j].total_cmp(&costs[*b][j]))?;
            if costs[best][j] < before[j] {
                lambda[j] = (lambda[j] * TRIALS[best].0).max(MIN_DAMPING);
                let block = trials[best].rows(6 * j, 6).into_owned();
                next.rows_mut(6 * j, 6).copy_from(&block);
                moved.push(j);
            } else {
                lambda[j] *= 100.0;
                if lambda[j] <= MAX_DAMPING {
                    still.push(j);
                }
            }
        }
        open = still;
    }
    if moved.is_empty() {
        return None;
    }
    // Each joint kept its step beside the others' trial steps; together they may differ a
    // little (the arm couples the joints): a joint left worse off goes back where it was.
    let sum = |e: &DVector<f64>| e.norm_squared();
    let at = |u: &DVector<f64>| DVector::from_vec(t.at(std::slice::from_ref(u)).swap_remove(0));
    let together = at(&next);
    if sum(&together) < sum(residual) {
        return Some((next, together));
    }
    let now = joint_costs(together.as_slice());
    let worse: Vec<usize> = moved.into_iter().filter(|&j| now[j] >= before[j]).collect();
    for &j in &worse {
        next.rows_mut(6 * j, 6).copy_from(&u.rows(6 * j, 6));
        lambda[j] *= 100.0;
    }
    let retried = at(&next);
    (sum(&retried) < sum(residual)).then_some((next, retried))
}

/// The errors at `u` and each joint's block of their Jacobian in the coordinates, by central
/// differences over [`RELATIVE_STEP`] either way (kept within the bounds): each coordinate not
/// `held` is moved in every joint at once, two rollouts for all six joints, and each joint's
/// errors are read as its own coordinate's doing (the arm couples the joints a little, which a
/// step sees as a slightly wrong slope and [`descend`] checks). Entries off the blocks are zero.
fn jacobian(t: &impl Residuals, u: &DVector<f64>, held: [bool; 6]) -> (DVector<f64>, DMatrix<f64>) {
    let free: Vec<usize> = (0..6).filter(|&m| !held[m]).collect();
    let ends = |m: usize| -> [(f64, f64); JOINTS] {
        std::array::from_fn(|j| {
            let i = 6 * j + m;
            let b = bounds(Joint::ALL[j])[m];
            let h = if b.log {
                RELATIVE_STEP.ln_1p() / (b.hi / b.lo).ln()
            } else {
                DELAY_STEP_S / (b.hi - b.lo)
            };
            ((u[i] - h).max(0.0), (u[i] + h).min(1.0))
        })
    };
    let mut points = vec![u.clone()];
    for &m in &free {
        for side in [0, 1] {
            let mut moved = u.clone();
            for (j, end) in ends(m).iter().enumerate() {
                moved[6 * j + m] = if side == 0 { end.0 } else { end.1 };
            }
            points.push(moved);
        }
    }
    let mut errors = t.at(&points).into_iter();
    let base = DVector::from_vec(errors.next().unwrap_or_default());
    let mut jac = DMatrix::zeros(base.len(), N);
    for &m in &free {
        let (below, above) = (errors.next().unwrap_or_default(), errors.next().unwrap_or_default());
        let ends = ends(m);
        for row in 0..base.len().min(below.len()).min(above.len()) {
            let j = row % JOINTS;
            let (lo, hi) = ends[j];
            jac[(row, 6 * j + m)] = (above[row] - below[row]) / (hi - lo).max(f64::EPSILON);
        }
    }
    (base, jac)
}

/// Whether coordinate `m` of joint `j` stays where it is: one marked in `held`, or one at a
/// bound that the error falls beyond (clamping a step there would spoil the step in the
/// others).
fn is_held(held: [bool; 6], m: usize, u: f64, gradient: f64) -> bool {
    held[m] || (u >= 1.0 && gradient < 0.0) || (u <= 0.0 && gradient > 0.0)
}

/// Joint `j`'s block of the normal equations: Jᵀ J and Jᵀ r over its own errors and
/// coordinates.
fn normal_block(jac: &DMatrix<f64>, residual: &DVector<f64>, j: usize) -> (DMatrix<f64>, DVector<f64>) {
    let rows: Vec<usize> = (j..residual.len()).step_by(JOINTS).collect();
    let block = DMatrix::from_fn(rows.len(), 6, |r, c| jac[(rows[r], 6 * j + c)]);
    let r = DVector::from_fn(rows.len(), |k, _| residual[rows[k]]);
    (block.transpose() * &block, block.transpose() * r)
}

/// Joint `j`'s damped Gauss–Newton step from `u` (Marquardt's scaling) on its block `a`, `g`
/// of the normal equations, in every coordinate not held ([`is_held`]): its six new
/// coordinates, kept within [0, 1].
fn step(
    (a, g): (&DMatrix<f64>, &DVector<f64>),
    u: &DVector<f64>,
    j: usize,
    lambda: f64,
    stretch: f64,
    held: [bool; 6],
) -> DVector<f64> {
    let (mut a, mut g) = (a.clone(), g.clone());
    let floor = 1e-9 * a.diagonal().max().max(1e-300);
    for m in 0..6 {
        if is_held(held, m, u[6 * j + m], g[m]) {
            a.row_mut(m).fill(0.0);
            a.column_mut(m).fill(0.0);
            g[m] = 0.0;
        }
    }
    for m in 0..6 {
        a[(m, m)] += lambda * a[(m, m)].max(floor) + floor;
    }
    let delta = a.cholesky().map_or_else(|| DVector::zeros(6), |c| c.solve(&(-g)));
    DVector::from_fn(6, |m, _| (u[6 * j + m] + stretch * delta[m]).clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linear errors `A (u − centre)` per joint, the same 8×6 `A` for each: a quadratic cost
    /// whose minimum is `centre` (within the bounds or not).
    struct Quadratic {
        a: DMatrix<f64>,
        centre: DVector<f64>,
    }

    impl Quadratic {
        fn new(centre: DVector<f64>) -> Self {
            // Coupled coordinates, well conditioned: a shifted pattern of 1, 0.5, 0.25 and −0.3.
            let a = DMatrix::from_fn(8, 6, |r, c| match (r + 6 - c) % 6 {
                0 => 1.0,
                1 => 0.5,
                2 => 0.25,
                _ if r >= 6 => -0.3,
                _ => 0.0,
            });
            Quadratic { a, centre }
        }

        /// Joint `j`'s errors at `u`.
        fn joint(&self, u: &DVector<f64>, j: usize) -> DVector<f64> {
            &self.a * (u.rows(6 * j, 6) - self.centre.rows(6 * j, 6))
        }
    }

    impl Residuals for Quadratic {
        fn at(&self, points: &[DVector<f64>]) -> Vec<Vec<f64>> {
            points
                .iter()
                .map(|u| {
                    let each: Vec<DVector<f64>> = (0..JOINTS).map(|j| self.joint(u, j)).collect();
                    (0..8 * JOINTS).map(|row| each[row % JOINTS][row / JOINTS]).collect()
                })
                .collect()
        }
    }

    /// A centre inside the bounds, different per joint; the delays (held) where they start.
    fn centre() -> DVector<f64> {
        DVector::from_fn(N, |i, _| {
            if i % 6 == DELAY {
                0.5
            } else {
                0.2 + 0.6 * ((i * 7) % 11) as f64 / 10.0
            }
        })
    }

    #[test]
    fn the_polish_finds_a_quadratics_minimum() {
        let q = Quadratic::new(centre());
        let start = DVector::from_element(N, 0.5);
        let before = DVector::from_vec(q.at(std::slice::from_ref(&start)).swap_remove(0)).norm_squared();
        let polished = polish(&q, start, 6, held_parameters(DELAY));
        let off = (&polished.u - &q.centre).amax();
        assert!(off < 1e-4, "off the minimum by {off}: {}", polished.u);
        assert!(
            polished.cost() < 1e-8 * before,
            "cost {} from {before}",
            polished.cost()
        );
    }

    #[test]
    fn the_polish_holds_what_it_is_told_to_and_stops_at_a_bound() {
        // Joint 0's stiffness wants 1.4, beyond its bound of 1; the delays want 0.9 but are held.
        let mut centre = centre();
        centre[0] = 1.4;
        (0..JOINTS).for_each(|j| centre[6 * j + DELAY] = 0.9);
        let q = Quadratic::new(centre.clone());
        let polished = polish(&q, DVector::from_element(N, 0.5), 8, held_parameters(DELAY));
        assert_eq!(polished.u[0], 1.0, "{}", polished.u);
        for j in 0..JOINTS {
            assert_eq!(polished.u[6 * j + DELAY], 0.5, "joint {j}'s delay moved");
        }
        // The bounded minimum of joint 0: its delay where it is held, the coordinates whose
        // least squares fall beyond a bound (its stiffness first) at that bound, the rest the
        // least squares with those fixed.
        let mut fixed: Vec<(usize, f64)> = vec![(DELAY, 0.5)];
        let best = loop {
            let free: Vec<usize> = (0..6).filter(|m| fixed.iter().all(|f| f.0 != *m)).collect();
            let sub = DMatrix::from_fn(8, free.len(), |r, c| q.a[(r, free[c])]);
            let mut rhs = &sub * DVector::from_fn(free.len(), |k, _| centre[free[k]]);
            for &(m, value) in &fixed {
                rhs -= q.a.column(m) * (value - centre[m]);
            }
            let least = (sub.transpose() * &sub)
                .cholesky()
                .unwrap()
                .solve(&(sub.transpose() * rhs));
            match (0..free.len()).find(|&k| !(0.0..=1.0).contains(&least[k])) {
                Some(k) => fixed.push((free[k], least[k].clamp(0.0, 1.0))),
                None => {
                    break free
                        .into_iter()
                        .zip(least.iter().copied())
                        .chain(fixed)
                        .collect::<Vec<_>>();
                }
            }
        };
        assert!(best.contains(&(0, 1.0)), "{best:?}");
        for (m, want) in best {
            assert!(
                (polished.u[m] - want).abs() < 1e-4,
                "coordinate {m}: {} against {want}",
                polished.u[m]
            );
        }
    }
}
