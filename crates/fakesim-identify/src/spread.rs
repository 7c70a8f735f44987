//! How well the recordings determine each fitted parameter: the standard error of each from
//! the curvature of the training error around the fit (Gauss–Newton, joint by joint).

use crate::fit::block_jacobian;
use crate::pool::Pool;
use crate::split::Segment;
use fakesim_twin::dynamics::Dynamics;
use nalgebra::{DMatrix, DVector};

/// Relative move of a positive parameter for the finite differences.
const RELATIVE_STEP: f64 = 0.05;
/// Move of the delay for the finite differences (s).
const DELAY_STEP_S: f64 = 0.002;
/// Index of the delay among a joint's parameters.
const DELAY: usize = 5;

/// Each joint's parameters' standard errors: relative (0.05 = ±5 %) for the first five, in
/// seconds for the delay; infinite where the recordings say nothing of a parameter.
pub fn standard_errors(pool: &Pool<'_>, train: &[Segment], fitted: &Dynamics) -> [[f64; 6]; 6] {
    let step = |m: usize| {
        if m == DELAY {
            DELAY_STEP_S
        } else {
            RELATIVE_STEP.ln_1p()
        }
    };
    let sets: Vec<Dynamics> = (0..6)
        .map(|m| {
            let mut d = *fitted;
            for joint in &mut d.joints {
                let mut v = joint.values();
                v[m] = if m == DELAY {
                    v[m] + DELAY_STEP_S
                } else {
                    v[m] * (1.0 + RELATIVE_STEP)
                };
                *joint = fakesim_twin::JointDynamics::from_values(v);
            }
            d
        })
        .collect();
    let mut all = pool.errors(&[*fitted], train);
    all.extend(pool.errors(&sets, train));
    let base = DVector::from_vec(all.remove(0));
    let jac = block_jacobian(&base, &all, |_, m| step(m));
    std::array::from_fn(|j| joint_errors(&base, &jac, j))
}

/// One joint's standard errors from its rows and columns of the Jacobian.
fn joint_errors(base: &DVector<f64>, jac: &DMatrix<f64>, j: usize) -> [f64; 6] {
    let rows: Vec<usize> = (j..base.len()).step_by(6).collect();
    let n = rows.len();
    if n <= 6 {
        return [f64::INFINITY; 6];
    }
    let jj = DMatrix::from_fn(n, 6, |r, c| jac[(rows[r], 6 * j + c)]);
    let s2 = rows.iter().map(|&r| base[r] * base[r]).sum::<f64>() / (n - 6) as f64;
    let info = jj.transpose() * &jj;
    let Some(cov) = info.clone().try_inverse().filter(|c| c.iter().all(|x| x.is_finite())) else {
        return std::array::from_fn(|m| {
            if info[(m, m)] > 0.0 {
                (s2 / info[(m, m)]).sqrt()
            } else {
                f64::INFINITY
            }
        });
    };
    std::array::from_fn(|m| {
        let v = s2 * cov[(m, m)];
        if v >= 0.0 { v.sqrt() } else { f64::INFINITY }
    })
}
