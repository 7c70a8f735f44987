//! End-effector moves: the target, the per-tick command, and the four stop reasons.

use crate::ik::{IK_JOINTS, TcpCorrection, solve};
use fakesim_twin::Pose;
use fakesim_twin::values::Bounds;
use nalgebra::{Matrix3x6, Rotation3, Vector3};
use serde::Serialize;
use std::collections::VecDeque;

/// Within this distance of the target position the move has reached it (m).
pub const POSITION_TOLERANCE_M: f64 = 0.008;
/// Within this angle of the target orientation the move has reached it (rad).
pub const ROTATION_TOLERANCE_RAD: f64 = 0.02;
/// Ticks over which stalling is judged.
pub const STALL_WINDOW: usize = 3;
/// Less total TCP travel than this over the window is a stall (m).
pub const STALL_EPSILON_M: f64 = 0.001;
/// Less total TCP rotation than this over the window is a stall (rad).
pub const STALL_EPSILON_RAD: f64 = 0.005;
/// Fraction of the remaining error asked for each tick (below 1, or the arm overshoots).
pub const GAIN: f64 = 0.6;
/// Most TCP travel asked for in one tick (m).
pub const MAX_TRAVEL_PER_TICK_M: f64 = 0.02;
/// Most TCP rotation asked for in one tick (rad).
pub const MAX_ROTATION_PER_TICK_RAD: f64 = 0.2;
/// Share of the orientation error pursued per tick when a rotation is asked for (orientation
/// is always solved after, and never at the cost of, position).
pub const ROTATION_WEIGHT: f64 = 1.0;
/// Share pursued by a move without a rotation, to keep the starting orientation where it can.
pub const KEEP_ORIENTATION_WEIGHT: f64 = 0.5;
/// Joint targets stay this far inside the joint range (rad).
const LIMIT_MARGIN_RAD: f64 = 0.01;

/// What a move did.
#[derive(Debug, Clone, PartialEq)]
pub struct MoveReport {
    /// Control ticks run (each uses one step of the budget).
    pub executed_steps: u32,
    /// Why it stopped.
    pub stop: MoveStop,
    /// TCP displacement of this call (m).
    pub achieved_delta_xyz: [f64; 3],
    /// Distance still missing to the target (m).
    pub remaining_distance_m: f64,
    /// TCP travel per tick (m), for the journal.
    pub tick_travel_m: Vec<f64>,
}

/// Why a move returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveStop {
    /// Within tolerance of the target.
    Reached,
    /// Barely moved over the stall window without reaching.
    Stalled,
    /// The per-call tick cap was hit while still moving.
    StepCap,
    /// The episode's step budget ran out.
    Budget,
}

/// Where a move is going: a position, and an orientation that is either required (a rotation
/// was asked for) or only preferred (the starting orientation, kept where the arm can).
#[derive(Debug, Clone, Copy)]
pub struct MoveTarget {
    /// Target TCP position (m, world).
    pub position: Vector3<f64>,
    /// Target TCP orientation.
    pub orientation: Rotation3<f64>,
    /// Whether reaching needs the orientation too.
    pub orientation_required: bool,
}

impl MoveTarget {
    /// The target `delta_xyz` away from `start`, rotated by `delta_rpy` about the base axes
    /// (`Rz(yaw) Ry(pitch) Rx(roll)`, applied on the left).
    pub fn from_delta(start: &Pose, delta_xyz: [f64; 3], delta_rpy: Option<[f64; 3]>) -> Self {
        let [roll, pitch, yaw] = delta_rpy.unwrap_or_default();
        MoveTarget {
            position: Vector3::from(start.pos) + Vector3::from(delta_xyz),
            orientation: Rotation3::from_euler_angles(roll, pitch, yaw) * start.rotation(),
            orientation_required: delta_rpy.is_some(),
        }
    }
}

/// Rotation still needed from `current` to `target`, as a world-frame rotation vector.
fn rotation_error(current: &Rotation3<f64>, target: &Rotation3<f64>) -> Vector3<f64> {
    (target * current.inverse()).scaled_axis()
}

/// One move in progress: computes each tick's joint targets and decides when to stop.
#[derive(Debug, Clone)]
pub struct MoveController {
    target: MoveTarget,
    start: Vector3<f64>,
    last: Pose,
    recent: VecDeque<(f64, f64)>,
}

impl MoveController {
    /// Starts a move from the TCP pose `start`.
    pub fn new(start: Pose, target: MoveTarget) -> Self {
        MoveController {
            target,
            start: Vector3::from(start.pos),
            last: start,
            recent: VecDeque::with_capacity(STALL_WINDOW + 1),
        }
    }

    /// Joint targets for the next tick: the measured joints plus a damped IK correction of a
    /// `GAIN` share of the remaining error, kept inside the joint ranges. The gripper keeps
    /// `current_ctrl[5]`.
    pub fn joint_targets(
        &self,
        tcp: &Pose,
        qpos: &[f64; 6],
        current_ctrl: &[f64; 6],
        jacobian: &(Matrix3x6<f64>, Matrix3x6<f64>),
        ranges: &[Bounds; 6],
    ) -> [f64; 6] {
        let translation = clamp_norm(
            (self.target.position - Vector3::from(tcp.pos)) * GAIN,
            MAX_TRAVEL_PER_TICK_M,
        );
        let rotation = clamp_norm(
            rotation_error(&tcp.rotation(), &self.target.orientation) * GAIN,
            MAX_ROTATION_PER_TICK_RAD,
        );
        let rotation_weight = if self.target.orientation_required {
            ROTATION_WEIGHT
        } else {
            KEEP_ORIENTATION_WEIGHT
        };
        let dq = solve(
            &jacobian.0,
            &jacobian.1,
            &TcpCorrection {
                translation,
                rotation,
                rotation_weight,
            },
        );
        let mut targets = *current_ctrl;
        for i in 0..IK_JOINTS {
            let Bounds { lo, hi } = ranges[i];
            targets[i] = (qpos[i] + dq[i]).clamp(lo + LIMIT_MARGIN_RAD, hi - LIMIT_MARGIN_RAD);
        }
        targets
    }

    /// Records the pose after a tick and says whether the move stops there. `ticks` counts the
    /// ticks of this call so far, `steps_left` the episode budget after this tick.
    pub fn after_tick(&mut self, tcp: &Pose, ticks: u32, cap: u32, steps_left: u64) -> Option<MoveStop> {
        let moved = (Vector3::from(tcp.pos) - Vector3::from(self.last.pos)).norm();
        let turned = rotation_error(&self.last.rotation(), &tcp.rotation()).norm();
        self.last = *tcp;
        self.recent.push_back((moved, turned));
        if self.recent.len() > STALL_WINDOW {
            self.recent.pop_front();
        }
        if self.reached(tcp) {
            return Some(MoveStop::Reached);
        }
        if self.stalled() {
            return Some(MoveStop::Stalled);
        }
        if steps_left == 0 {
            return Some(MoveStop::Budget);
        }
        (ticks >= cap).then_some(MoveStop::StepCap)
    }

    fn reached(&self, tcp: &Pose) -> bool {
        let position_ok = self.remaining_distance_m(tcp) < POSITION_TOLERANCE_M;
        let orientation_ok = !self.target.orientation_required
            || rotation_error(&tcp.rotation(), &self.target.orientation).norm() < ROTATION_TOLERANCE_RAD;
        position_ok && orientation_ok
    }

    fn stalled(&self) -> bool {
        if self.recent.len() < STALL_WINDOW {
            return false;
        }
        let moved: f64 = self.recent.iter().map(|(m, _)| m).sum();
        let turned: f64 = self.recent.iter().map(|(_, r)| r).sum();
        let rotation_stalled = !self.target.orientation_required || turned < STALL_EPSILON_RAD;
        moved < STALL_EPSILON_M && rotation_stalled
    }

    /// The report of a move that stopped at `tcp` after `executed_steps` ticks.
    pub fn report(&self, executed_steps: u32, stop: MoveStop, tcp: &Pose, tick_travel_m: Vec<f64>) -> MoveReport {
        MoveReport {
            executed_steps,
            stop,
            achieved_delta_xyz: self.achieved_delta(tcp),
            remaining_distance_m: self.remaining_distance_m(tcp),
            tick_travel_m,
        }
    }

    /// Distance still missing to the target position (m).
    pub fn remaining_distance_m(&self, tcp: &Pose) -> f64 {
        (self.target.position - Vector3::from(tcp.pos)).norm()
    }

    /// Displacement of the TCP since the move started (m).
    pub fn achieved_delta(&self, tcp: &Pose) -> [f64; 3] {
        (Vector3::from(tcp.pos) - self.start).into()
    }
}

fn clamp_norm(v: Vector3<f64>, max: f64) -> Vector3<f64> {
    let n = v.norm();
    if n > max && n.is_finite() {
        v * (max / n)
    } else if n.is_finite() {
        v
    } else {
        Vector3::zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pose(x: f64, y: f64, z: f64) -> Pose {
        Pose {
            pos: [x, y, z],
            quat: [1.0, 0.0, 0.0, 0.0],
        }
    }

    #[test]
    fn reached_within_eight_millimetres() {
        let start = pose(0.0, 0.0, 1.0);
        let mut c = MoveController::new(start, MoveTarget::from_delta(&start, [0.05, 0.0, 0.0], None));
        assert_eq!(c.after_tick(&pose(0.03, 0.0, 1.0), 1, 30, 100), None);
        assert_eq!(
            c.after_tick(&pose(0.0425, 0.0, 1.0), 2, 30, 100),
            Some(MoveStop::Reached)
        );
    }

    #[test]
    fn stalled_after_three_ticks_of_less_than_a_millimetre_in_total() {
        let start = pose(0.0, 0.0, 1.0);
        let mut c = MoveController::new(start, MoveTarget::from_delta(&start, [0.0, 0.0, -0.1], None));
        assert_eq!(c.after_tick(&pose(0.0, 0.0, 0.98), 1, 30, 100), None);
        assert_eq!(c.after_tick(&pose(0.0, 0.0, 0.9797), 2, 30, 100), None);
        assert_eq!(
            c.after_tick(&pose(0.0, 0.0, 0.9794), 3, 30, 100),
            None,
            "the window still holds the 2 cm tick"
        );
        assert_eq!(
            c.after_tick(&pose(0.0, 0.0, 0.9791), 4, 30, 100),
            Some(MoveStop::Stalled)
        );
    }

    #[test]
    fn budget_wins_over_step_cap_and_reached_wins_over_both() {
        let start = pose(0.0, 0.0, 1.0);
        let target = MoveTarget::from_delta(&start, [0.1, 0.0, 0.0], None);
        let mut c = MoveController::new(start, target);
        assert_eq!(c.after_tick(&pose(0.02, 0.0, 1.0), 30, 30, 0), Some(MoveStop::Budget));
        let mut c = MoveController::new(start, target);
        assert_eq!(c.after_tick(&pose(0.02, 0.0, 1.0), 30, 30, 5), Some(MoveStop::StepCap));
        let mut c = MoveController::new(start, target);
        assert_eq!(c.after_tick(&pose(0.095, 0.0, 1.0), 30, 30, 0), Some(MoveStop::Reached));
    }

    #[test]
    fn orientation_counts_only_when_asked_for() {
        let start = pose(0.0, 0.0, 1.0);
        let turned = Pose {
            pos: [0.0, 0.0, 1.0],
            quat: [0.995, 0.0998, 0.0, 0.0],
        };
        let mut free = MoveController::new(start, MoveTarget::from_delta(&start, [0.0; 3], None));
        assert_eq!(free.after_tick(&turned, 1, 30, 10), Some(MoveStop::Reached));
        let mut fixed = MoveController::new(start, MoveTarget::from_delta(&start, [0.0; 3], Some([0.0; 3])));
        assert_eq!(fixed.after_tick(&turned, 1, 30, 10), None);
    }
}
