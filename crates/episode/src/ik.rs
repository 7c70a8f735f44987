//! Damped least-squares inverse kinematics on the TCP, one small correction per control tick.

use nalgebra::{Matrix3x6, Matrix6, SMatrix, SVector, Vector3, Vector6};

/// Arm joints IK may move (the gripper, index 5, is not part of the chain).
pub const IK_JOINTS: usize = 5;

/// Damping of the least-squares solve (m); larger is steadier near singularities.
const DAMPING: f64 = 0.03;

/// A desired TCP correction for one tick, in the world frame.
#[derive(Debug, Clone, Copy)]
pub struct TcpCorrection {
    /// Translation wanted this tick (m).
    pub translation: Vector3<f64>,
    /// Rotation vector wanted this tick (rad), used only when `rotation_weight > 0`.
    pub rotation: Vector3<f64>,
    /// Weight of orientation against position (position weighs 1).
    pub rotation_weight: f64,
}

/// Joint changes (rad) that best realise `correction`, damped, for the five IK joints.
pub fn solve(jac_pos: &Matrix3x6<f64>, jac_rot: &Matrix3x6<f64>, correction: &TcpCorrection) -> [f64; IK_JOINTS] {
    let w = correction.rotation_weight.max(0.0);
    let mut jac = SMatrix::<f64, 6, IK_JOINTS>::zeros();
    let mut err = Vector6::zeros();
    for r in 0..3 {
        for c in 0..IK_JOINTS {
            jac[(r, c)] = jac_pos[(r, c)];
            jac[(r + 3, c)] = w * jac_rot[(r, c)];
        }
        err[r] = correction.translation[r];
        err[r + 3] = w * correction.rotation[r];
    }
    let jjt: Matrix6<f64> = jac * jac.transpose() + Matrix6::identity() * (DAMPING * DAMPING);
    let Some(y) = jjt.lu().solve(&err) else {
        return [0.0; IK_JOINTS];
    };
    let dq: SVector<f64, IK_JOINTS> = jac.transpose() * y;
    if dq.iter().all(|v| v.is_finite()) {
        std::array::from_fn(|i| dq[i])
    } else {
        [0.0; IK_JOINTS]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reachable_translation_is_followed_to_first_order() {
        let jac_pos = Matrix3x6::new(
            1.0, 0.0, 0.0, 0.2, 0.0, 0.0, //
            0.0, 1.0, 0.0, 0.0, 0.3, 0.0, //
            0.0, 0.0, 1.0, 0.1, 0.0, 0.0,
        );
        let jac_rot = Matrix3x6::zeros();
        let wanted = Vector3::new(0.01, -0.02, 0.005);
        let dq = solve(
            &jac_pos,
            &jac_rot,
            &TcpCorrection {
                translation: wanted,
                rotation: Vector3::zeros(),
                rotation_weight: 0.0,
            },
        );
        let dq6 = nalgebra::Vector6::new(dq[0], dq[1], dq[2], dq[3], dq[4], 0.0);
        let achieved = jac_pos * dq6;
        assert!(
            (achieved - wanted).norm() < 0.01 * wanted.norm(),
            "{achieved} vs {wanted}"
        );
    }

    #[test]
    fn a_singular_jacobian_gives_finite_small_steps() {
        let dq = solve(
            &Matrix3x6::zeros(),
            &Matrix3x6::zeros(),
            &TcpCorrection {
                translation: Vector3::new(1.0, 1.0, 1.0),
                rotation: Vector3::new(1.0, 0.0, 0.0),
                rotation_weight: 1.0,
            },
        );
        assert!(dq.iter().all(|v| v.is_finite() && v.abs() < 1e-9));
    }
}
