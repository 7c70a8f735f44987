//! How well the recordings determine each parameter: its profile. Every joint's parameter is
//! moved [`MOVE`] either way from the fit (the delay a physics step), the joint's other
//! parameters are polished again with it held there, and the joint's training error is
//! compared with the fit's.
//!
//! A slope taken at the fit cannot tell a parameter the recordings fix from one whose change
//! the others make up: along a valley (a joint's damping, armature and torque limit grown
//! together while its servo saturates) or for a friction a stiff servo hides, a small move
//! still changes the error (it is rough in the parameters), yet a move of tens of percent,
//! made up by the rest, barely does. The profile measures the rise over the same 10 % the fit
//! is asked to recover a parameter within, after the rest have made up what they can.
//!
//! The rise is read as a likelihood ratio with each segment one independent error (a replay
//! that starts a little off stays off for a while, so a segment's readings are not
//! independent): with `S` training segments and the joint's squared error `C` at the fit, a
//! rise `ΔC` is `ΔC·S/C` standard deviations squared, and the standard error is the move
//! divided by the square root of that, on the side that rises least. A move that lowers a
//! joint's error means the fit was short of the minimum: the joint takes that point and the
//! profiles run again from there, at most [`PASSES`] times. Without the standard errors, the
//! delays alone are profiled ([`step_delays`]), for the point their moves may lead to.
//!
//! A rise after the others were polished again is only as good as that polish: along a valley
//! of a rough error it may stop well short of the floor, and the rise then reads as a tight
//! standard error the recordings do not support (the known truth's wrist_roll: damping,
//! armature and torque limit 20–24 % off, each at ±2–3 %). So each profile also says how much
//! of the move the others made up: the rise of the move alone (nothing polished) against the
//! rise after the polish, and which of the joint's other parameters the polish moved at least
//! [`PARTNER_MOVE`]. Where the move alone would have pinned the parameter within the standard
//! error called well determined, yet the polish made up at least [`MADE_UP`] of its rise by
//! moving others so far that it is no longer well determined, the parameter *trades off*
//! against those others ([`TradeOffs`]): the recordings would pin it, but not apart from them.
//! A parameter is then one of three: well determined, trading off, or one the recordings
//! hardly constrain (its move alone barely changes the error). (Measured on three known truths
//! before the last condition: the made-up share alone marked nearly every damping, armature
//! and torque limit, the well-determined ones included.)

use crate::TradeOffs;
use crate::fit::{bounds, dynamics_at};
use crate::refine::{DELAY, JOINTS, Polished, held_parameters, joint_costs, polish};
use crate::train::Training;
use fakesim_twin::joints::Joint;
use nalgebra::DVector;

/// Relative move of a parameter in its profile: the share the fit should recover it within.
pub const MOVE: f64 = 0.1;
/// Most rounds of profiles, each after a round that moved a joint to a lower error.
const PASSES: usize = 3;
/// Share by which a profile's point must lower a joint's error for the joint to move there.
const MIN_GAIN: f64 = 0.01;
/// Share of a move's rise the other parameters must make up for a trade-off.
pub const MADE_UP: f64 = 0.5;
/// The rise of a move alone (standard deviations squared, see the module's doc) from which
/// the move alone would call the parameter well determined (`(MOVE / 0.03)²`): only then can
/// the others making it up turn a tight standard error into a trade-off.
const PINNED_ALONE: f64 =
    (MOVE / crate::report::WELL_DETERMINED_RELATIVE) * (MOVE / crate::report::WELL_DETERMINED_RELATIVE);
/// Relative move of another parameter of the joint, in a profile's polish, that counts it as
/// making up the move (half the move profiled).
pub const PARTNER_MOVE: f64 = 0.05;

/// A profiled fit: possibly moved on from the polish's, with its standard errors.
pub(crate) struct Profiled {
    /// Where the fit ends.
    pub fit: Polished,
    /// Per joint and parameter: relative (0.05 = ±5 %) for the first five, in seconds for the
    /// delay; infinite where no move raised the joint's error.
    pub standard_errors: [[f64; 6]; JOINTS],
    /// Per joint and parameter, the parameters it trades off against (see the module's doc).
    pub trade_offs: TradeOffs,
}

/// Profiles every parameter about `fit` (polished at the delays [`crate::fit`] chose), each
/// polish taking at most `rounds` steps (see the module's doc).
pub(crate) fn profile(t: &Training<'_>, fit: Polished, rounds: usize) -> Profiled {
    walk(t, fit, rounds, &[0, 1, 2, 3, 4, DELAY], PASSES)
}

/// `fit` moved on where a joint's delay a physics step either way, the joint's other
/// parameters polished again, lowers its error: one round of the delays' profiles alone, a
/// sixth of the cost of a round of all six parameters' (the polish holds the delays on their
/// grid, so only these moves can correct one left a step off).
pub(crate) fn step_delays(t: &Training<'_>, fit: Polished, rounds: usize) -> Polished {
    walk(t, fit, rounds, &[DELAY], 1).fit
}

/// Profiles `parameters` about `fit` in at most `passes` rounds (see the module's doc); the
/// standard errors of the others are infinite. A fit moved on is polished again before its
/// round of profiles, as far as a profile's point is, so that a rise measures the move and not
/// how much longer the point was polished.
fn walk(t: &Training<'_>, mut fit: Polished, rounds: usize, parameters: &[usize], passes: usize) -> Profiled {
    let segments = t.segments().max(1) as f64;
    let mut pass = 1;
    loop {
        let base = fit.joint_costs();
        // rises[m][side][j]: joint j's error at parameter m's move that way, less the fit's.
        let mut rises = [[[f64::NAN; JOINTS]; 2]; 6];
        let mut trade_offs: TradeOffs = [[0; 6]; JOINTS];
        let mut lowest = base.map(|c| c * (1.0 - MIN_GAIN));
        let mut better: [Option<DVector<f64>>; JOINTS] = Default::default();
        for &m in parameters {
            for (rise, sign) in rises[m].iter_mut().zip([-1.0, 1.0]) {
                let (moved, within) = moved(&fit.u, m, sign, t.timestep());
                let alone = joint_costs(&t.errors(&[dynamics_at(&moved)]).swap_remove(0));
                let there = polish(t, moved, rounds, held_parameters(m));
                let costs = there.joint_costs();
                let partners = partners(&fit.u, &there.u, m);
                for j in 0..JOINTS {
                    if within[j] {
                        rise[j] = costs[j] - base[j];
                        let alone_rise = alone[j] - base[j];
                        let made_up = 1.0 - rise[j].max(0.0) / alone_rise.max(f64::MIN_POSITIVE);
                        let pinned_alone = alone_rise * segments / base[j].max(f64::MIN_POSITIVE) >= PINNED_ALONE;
                        if m != DELAY && pinned_alone && made_up >= MADE_UP {
                            trade_offs[j][m] |= partners[j];
                        }
                    }
                    if costs[j] < lowest[j] {
                        lowest[j] = costs[j];
                        better[j] = Some(there.u.rows(6 * j, 6).into_owned());
                    }
                }
            }
        }
        let standard_errors = standard_errors(&rises, &base, segments, t.timestep());
        // A parameter the profile calls well determined does not trade off, whatever its
        // polish moved: the marks part the parameters (see the module's doc).
        for (marks, errors) in trade_offs.iter_mut().zip(&standard_errors) {
            for (m, mark) in marks.iter_mut().enumerate() {
                if crate::report::well_determined(m, errors[m]) {
                    *mark = 0;
                }
            }
        }
        let done = Profiled {
            fit,
            standard_errors,
            trade_offs,
        };
        if better.iter().all(Option::is_none) {
            return done;
        }
        let mut u = done.fit.u.clone();
        for (j, block) in better.iter().enumerate() {
            if let Some(block) = block {
                u.rows_mut(6 * j, 6).copy_from(block);
            }
        }
        let residual = DVector::from_vec(t.errors(&[dynamics_at(&u)]).swap_remove(0));
        let moved_on = Polished { u: u.clone(), residual };
        if moved_on.cost() >= done.fit.cost() {
            return done;
        }
        if pass >= passes {
            // No round is left to profile the lower point: the standard errors stay those
            // measured about the point it came from.
            return Profiled { fit: moved_on, ..done };
        }
        pass += 1;
        fit = polish(t, u, rounds, held_parameters(DELAY));
    }
}

/// Standard errors from each joint's parameters' `rises` either way (NaN: not measured) over
/// its squared error `base` at the fit, with `segments` independent errors (see the module's
/// doc); a delay's move is `dt`.
fn standard_errors(
    rises: &[[[f64; JOINTS]; 2]; 6],
    base: &[f64; JOINTS],
    segments: f64,
    dt: f64,
) -> [[f64; 6]; JOINTS] {
    std::array::from_fn(|j| {
        std::array::from_fn(|m| {
            let rise = rises[m]
                .iter()
                .map(|side| side[j])
                .filter(|r| !r.is_nan())
                .fold(f64::INFINITY, f64::min);
            let sigmas = rise * segments / base[j].max(f64::MIN_POSITIVE);
            let span = if m == DELAY { dt } else { MOVE };
            if rise.is_finite() && sigmas > 0.0 {
                span / sigmas.sqrt()
            } else {
                f64::INFINITY
            }
        })
    })
}

/// Per joint, the parameters other than `m` and the delay that moved at least
/// [`PARTNER_MOVE`] from `fit` to `there` (bit `k` for parameter `k`).
fn partners(fit: &DVector<f64>, there: &DVector<f64>, m: usize) -> [u8; JOINTS] {
    let (a, b) = (dynamics_at(fit), dynamics_at(there));
    std::array::from_fn(|j| {
        let (a, b) = (a.joints[j].values(), b.joints[j].values());
        (0..DELAY)
            .filter(|&k| k != m && (b[k] / a[k] - 1.0).abs() >= PARTNER_MOVE)
            .fold(0, |mask, k| mask | (1 << k))
    })
}

/// `u` with parameter `m` of every joint moved one profile step, `sign` telling which way
/// ([`MOVE`] of its value, or a physics step `dt` of the delay), and for each joint whether
/// the move stayed within its bounds (one that did not is clamped there and not read).
fn moved(u: &DVector<f64>, m: usize, sign: f64, dt: f64) -> (DVector<f64>, [bool; JOINTS]) {
    let mut moved = u.clone();
    let within = std::array::from_fn(|j| {
        let b = bounds(Joint::ALL[j])[m];
        let i = 6 * j + m;
        let by = if b.log {
            (1.0 + sign * MOVE).ln() / (b.hi / b.lo).ln()
        } else {
            sign * dt / (b.hi - b.lo)
        };
        moved[i] = (u[i] + by).clamp(0.0, 1.0);
        (0.0..=1.0).contains(&(u[i] + by))
    });
    (moved, within)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rises of `rise` on every side of every parameter of every joint.
    fn rises(rise: f64) -> [[[f64; JOINTS]; 2]; 6] {
        [[[rise; JOINTS]; 2]; 6]
    }

    /// `r` with joint `j`'s parameter `m` rising by `sides` (down, up).
    fn with(mut r: [[[f64; JOINTS]; 2]; 6], j: usize, m: usize, sides: [f64; 2]) -> [[[f64; JOINTS]; 2]; 6] {
        r[m][0][j] = sides[0];
        r[m][1][j] = sides[1];
        r
    }

    #[test]
    fn a_rise_of_four_segments_worth_is_two_standard_errors_over_the_move() {
        // With 12 segments and a squared error of 1.2, a rise of 0.4 is 4 = 2² standard
        // deviations squared: the move is two standard errors.
        let se = standard_errors(&rises(0.4), &[1.2; JOINTS], 12.0, 0.0025);
        assert!((se[0][0] - MOVE / 2.0).abs() < 1e-12, "{}", se[0][0]);
        assert!((se[3][DELAY] - 0.0025 / 2.0).abs() < 1e-12, "{}", se[3][DELAY]);
    }

    #[test]
    fn the_side_that_rises_least_decides() {
        let r = with(rises(0.4), 2, 1, [0.4, 0.1]);
        let se = standard_errors(&r, &[1.2; JOINTS], 12.0, 0.0025);
        assert!((se[2][1] - MOVE).abs() < 1e-12, "{}", se[2][1]);
    }

    #[test]
    fn a_move_that_does_not_raise_the_error_leaves_the_parameter_undetermined() {
        let r = with(rises(0.4), 1, 3, [0.0, 0.4]);
        let r = with(r, 4, 2, [-0.1, 0.4]);
        let r = with(r, 5, 0, [f64::NAN; 2]);
        let se = standard_errors(&r, &[1.2; JOINTS], 12.0, 0.0025);
        assert_eq!(se[1][3], f64::INFINITY);
        assert_eq!(se[4][2], f64::INFINITY);
        assert_eq!(se[5][0], f64::INFINITY);
        assert!(se[0][0].is_finite());
    }

    #[test]
    fn the_parameters_a_polish_moved_by_half_the_move_are_partners() {
        let fit = DVector::from_element(36, 0.5);
        let mut there = fit.clone();
        // Joint 4's armature moved 8 % and its friction 2 % (coordinates on a log scale).
        let by = |m: usize, share: f64| {
            let b = bounds(Joint::ALL[4])[m];
            (1.0 + share).ln() / (b.hi / b.lo).ln()
        };
        there[6 * 4 + 2] += by(2, 0.08);
        there[6 * 4 + 3] += by(3, 0.02);
        // Joint 1's damping is the parameter profiled: its own move does not count.
        there[6 + 1] += by(1, 0.1);
        let p = partners(&fit, &there, 1);
        assert_eq!(p[4], 1 << 2);
        assert_eq!(p[1], 0);
        assert!(p.iter().enumerate().all(|(j, mask)| j == 4 || *mask == 0), "{p:?}");
    }

    #[test]
    fn a_move_past_a_bound_is_clamped_and_not_read() {
        let mut u = DVector::from_element(36, 0.5);
        u[6 * 2 + 1] = 1.0;
        let (up, within) = moved(&u, 1, 1.0, 0.0025);
        assert!(!within[2] && within[0]);
        assert_eq!(up[6 * 2 + 1], 1.0);
        let value = |u: &DVector<f64>| dynamics_at(u).joints[0].values()[1];
        let ratio = value(&up) / value(&u);
        assert!((ratio - (1.0 + MOVE)).abs() < 1e-9, "{ratio}");
    }
}
