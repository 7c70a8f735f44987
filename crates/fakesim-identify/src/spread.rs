//! How well the recordings determine each fitted parameter: standard errors from the Jacobian
//! of the training errors at the fit, robust to errors correlated within a segment (the
//! sandwich estimate with segments as clusters). A replay that starts a little off (a rounded
//! position, a velocity estimated from rounded readings) stays off for a while, so the readings
//! of one segment are not independent draws and the textbook `s²(JᵀJ)⁻¹` would understate the
//! spread by the square root of the readings per segment.

use crate::fit::bounds;
use fakesim_twin::joints::Joint;
use nalgebra::{DMatrix, DVector};

/// Share of the largest curvature below which a coordinate counts as not seen at all.
const UNSEEN: f64 = 1e-12;

/// Each joint's parameters' standard errors from the Jacobian `jac` (in the fit's coordinates)
/// and the errors `residual` at the fit, whose rows come segment by segment, `rows[s]`
/// of them for segment `s`: relative (0.05 = ±5 %) for the first five, in seconds for the
/// delay; infinite where the recordings say nothing of a parameter.
pub fn standard_errors(jac: &DMatrix<f64>, residual: &DVector<f64>, rows: &[usize]) -> [[f64; 6]; 6] {
    let n = jac.ncols();
    let a = jac.transpose() * jac;
    let mut b = DMatrix::zeros(n, n);
    let mut at = 0;
    for &count in rows {
        let count = count.min(jac.nrows().saturating_sub(at));
        let g = jac.rows(at, count).transpose() * residual.rows(at, count);
        b += &g * g.transpose();
        at += count;
    }
    let clusters = rows.len() as f64;
    if clusters > 1.0 {
        b *= clusters / (clusters - 1.0);
    }
    let largest = a.diagonal().max();
    let seen: Vec<usize> = (0..n)
        .filter(|&i| a[(i, i)] > UNSEEN * largest && largest > 0.0)
        .collect();
    let scale = DVector::from_iterator(seen.len(), seen.iter().map(|&i| 1.0 / a[(i, i)].sqrt()));
    let sub = |m: &DMatrix<f64>| {
        DMatrix::from_fn(seen.len(), seen.len(), |r, c| {
            m[(seen[r], seen[c])] * scale[r] * scale[c]
        })
    };
    let (a_s, b_s) = (sub(&a), sub(&b));
    let inverse = a_s
        .clone()
        .try_inverse()
        .or_else(|| a_s.pseudo_inverse(UNSEEN).ok())
        .unwrap_or_else(|| DMatrix::zeros(seen.len(), seen.len()));
    let v = &inverse * b_s * &inverse;
    let mut se_u = vec![f64::INFINITY; n];
    for (k, &i) in seen.iter().enumerate() {
        let var = v[(k, k)] * scale[k] * scale[k];
        if var.is_finite() && var >= 0.0 {
            se_u[i] = var.sqrt();
        }
    }
    std::array::from_fn(|j| {
        let b = bounds(Joint::ALL[j]);
        std::array::from_fn(|m| {
            let span = if b[m].log {
                (b[m].hi / b[m].lo).ln()
            } else {
                b[m].hi - b[m].lo
            };
            span * se_u[6 * j + m]
        })
    })
}
