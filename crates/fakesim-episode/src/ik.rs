//! Damped least-squares inverse kinematics on the TCP, one small correction per control tick,
//! with position strictly first: orientation is corrected only in the null space of the
//! position task, so a rotation the arm cannot make never pulls the TCP off its target.

use nalgebra::{Matrix3x6, SMatrix, SVector, Vector3};

/// Arm joints IK may move (the gripper, index 5, is not part of the chain).
pub const IK_JOINTS: usize = 5;

/// Damping of the least-squares solves; larger is steadier near singularities.
const DAMPING: f64 = 0.03;

type Jac = SMatrix<f64, 3, IK_JOINTS>;
type JointStep = SVector<f64, IK_JOINTS>;

/// A desired TCP correction for one tick, in the world frame.
#[derive(Debug, Clone, Copy)]
pub struct TcpCorrection {
    /// Translation wanted this tick (m); the primary task.
    pub translation: Vector3<f64>,
    /// Rotation vector wanted this tick (rad); the secondary task.
    pub rotation: Vector3<f64>,
    /// Share of `rotation` pursued (0 leaves orientation alone).
    pub rotation_weight: f64,
}

/// `J^T (J J^T + λ² I)^-1 e`, or zero when the system cannot be solved.
fn damped_solve(jac: &Jac, error: &Vector3<f64>) -> JointStep {
    let jjt = jac * jac.transpose() + nalgebra::Matrix3::identity() * (DAMPING * DAMPING);
    jjt.lu()
        .solve(error)
        .map_or_else(JointStep::zeros, |y| jac.transpose() * y)
}

/// The projector onto joint motions that leave the TCP position unchanged (to first order):
/// the identity less the row space of the position Jacobian.
fn position_null_space(jac: &Jac) -> SMatrix<f64, IK_JOINTS, IK_JOINTS> {
    let identity = SMatrix::<f64, IK_JOINTS, IK_JOINTS>::identity();
    let svd = jac.svd(false, true);
    let Some(v_t) = svd.v_t else {
        return SMatrix::zeros();
    };
    let mut projector = identity;
    for (row, sigma) in v_t.row_iter().zip(svd.singular_values.iter()) {
        if *sigma > 1e-9 {
            projector -= row.transpose() * row;
        }
    }
    projector
}

fn arm_columns(m: &Matrix3x6<f64>) -> Jac {
    Jac::from_fn(|r, c| m[(r, c)])
}

/// Joint changes (rad) for the five IK joints: the translation first, then as much of the
/// weighted rotation as the position task leaves free.
pub fn solve(jac_pos: &Matrix3x6<f64>, jac_rot: &Matrix3x6<f64>, correction: &TcpCorrection) -> [f64; IK_JOINTS] {
    let jp = arm_columns(jac_pos);
    let jr = arm_columns(jac_rot);
    let dq_position = damped_solve(&jp, &correction.translation);
    let weight = correction.rotation_weight.max(0.0);
    let dq = if weight > 0.0 {
        let null_space = position_null_space(&jp);
        let rotation_left = correction.rotation * weight - jr * dq_position;
        let dq_rotation = damped_solve(&(jr * null_space), &rotation_left);
        dq_position + null_space * dq_rotation
    } else {
        dq_position
    };
    if dq.iter().all(|v| v.is_finite()) {
        std::array::from_fn(|i| dq[i])
    } else {
        [0.0; IK_JOINTS]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn as6(dq: [f64; IK_JOINTS]) -> nalgebra::Vector6<f64> {
        nalgebra::Vector6::new(dq[0], dq[1], dq[2], dq[3], dq[4], 0.0)
    }

    #[test]
    fn a_reachable_translation_is_followed_to_first_order() {
        let jac_pos = Matrix3x6::new(
            1.0, 0.0, 0.0, 0.2, 0.0, 0.0, //
            0.0, 1.0, 0.0, 0.0, 0.3, 0.0, //
            0.0, 0.0, 1.0, 0.1, 0.0, 0.0,
        );
        let wanted = Vector3::new(0.01, -0.02, 0.005);
        let correction = TcpCorrection {
            translation: wanted,
            rotation: Vector3::zeros(),
            rotation_weight: 0.0,
        };
        let achieved = jac_pos * as6(solve(&jac_pos, &Matrix3x6::zeros(), &correction));
        assert!(
            (achieved - wanted).norm() < 0.01 * wanted.norm(),
            "{achieved} vs {wanted}"
        );
    }

    #[test]
    fn rotation_never_costs_translation() {
        // Joints 0..3 move the point; joints 3 and 4 also rotate it. Asking for a big rotation
        // must leave the translation as the position task alone would make it.
        let jac_pos = Matrix3x6::new(
            1.0, 0.0, 0.0, 0.5, 0.0, 0.0, //
            0.0, 1.0, 0.0, 0.0, 0.0, 0.0, //
            0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
        );
        let jac_rot = Matrix3x6::new(
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, //
            0.0, 0.0, 0.0, 0.0, 1.0, 0.0, //
            0.0, 0.0, 1.0, 0.0, 0.0, 0.0,
        );
        let translation = Vector3::new(0.01, 0.0, -0.01);
        let rotation = Vector3::new(0.3, -0.2, 0.5);
        let with = solve(
            &jac_pos,
            &jac_rot,
            &TcpCorrection {
                translation,
                rotation,
                rotation_weight: 1.0,
            },
        );
        let achieved = jac_pos * as6(with);
        assert!((achieved - translation).norm() < 1e-3, "{achieved} vs {translation}");
        let turned = jac_rot * as6(with);
        assert!(
            (turned[1] - rotation[1]).abs() < 0.01,
            "joint 4 is free of the position task: {turned}"
        );
    }

    #[test]
    fn a_singular_jacobian_gives_finite_small_steps() {
        let correction = TcpCorrection {
            translation: Vector3::new(1.0, 1.0, 1.0),
            rotation: Vector3::new(1.0, 0.0, 0.0),
            rotation_weight: 1.0,
        };
        let dq = solve(&Matrix3x6::zeros(), &Matrix3x6::zeros(), &correction);
        assert!(dq.iter().all(|v| v.is_finite() && v.abs() < 1e-9));
    }
}
