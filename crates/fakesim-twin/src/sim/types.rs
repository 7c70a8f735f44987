//! What the twin reports: poses, frames, Jacobians, contacts, robot state, model info.

use crate::values::Bounds;
use nalgebra::{Rotation3, UnitQuaternion};

/// One arm joint as compiled in the model.
#[derive(Debug, Clone, PartialEq)]
pub struct JointInfo {
    /// MuJoCo joint and actuator name (the servo id on the SO-101).
    pub id: String,
    /// LeRobot label.
    pub label: String,
    /// Joint range.
    pub range: Bounds,
    /// Range of the position servo's setpoint.
    pub ctrl_range: Bounds,
    /// Unit of positions (`rad` for hinges).
    pub unit: &'static str,
    pub(super) qpos_adr: usize,
    pub(super) dof_adr: usize,
    pub(super) actuator: usize,
}

/// A world-frame pose: position in metres, orientation as a unit quaternion (w, x, y, z).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// Position (m).
    pub pos: [f64; 3],
    /// Orientation (w, x, y, z).
    pub quat: [f64; 4],
}

impl Pose {
    pub(super) fn from_parts(pos: &[f64; 3], rot: Rotation3<f64>) -> Self {
        let q = UnitQuaternion::from_rotation_matrix(&rot);
        Pose {
            pos: *pos,
            quat: [q.w, q.i, q.j, q.k],
        }
    }

    /// Orientation as a rotation matrix.
    pub fn rotation(&self) -> Rotation3<f64> {
        let [w, x, y, z] = self.quat;
        UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(w, x, y, z)).to_rotation_matrix()
    }
}

/// What kind of frame a [`FramePose`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A body frame.
    Body,
    /// A site frame.
    Site,
}

/// A named frame's world pose.
#[derive(Debug, Clone, PartialEq)]
pub struct FramePose {
    /// Body or site name.
    pub name: String,
    /// Body or site.
    pub kind: FrameKind,
    /// World pose.
    pub pose: Pose,
}

/// A Jacobian of a point on a body, site or geom; columns are the model's DOFs.
#[derive(Debug, Clone, PartialEq)]
pub struct Jacobian {
    /// One name per column: the joint owning the DOF (with `[k]` for multi-DOF joints).
    pub dof_names: Vec<String>,
    /// Translational rows, 3 x nv, row-major.
    pub position: Vec<f64>,
    /// Rotational rows, 3 x nv, row-major.
    pub rotation: Vec<f64>,
}

/// A geom pair inside the collision detection range.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactInfo {
    /// First geom's name (or `geom<N>` when unnamed).
    pub geom1: String,
    /// Second geom's name.
    pub geom2: String,
    /// Signed distance (m); negative is penetration.
    pub dist: f64,
    /// True when the pair reaches the solver and carries force; false for a proximity report.
    pub active: bool,
}

/// The arm's state as the twin sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct RobotState {
    /// Simulated time (s).
    pub time: f64,
    /// Joint positions (rad), action-key order.
    pub qpos: [f64; 6],
    /// Joint velocities (rad/s).
    pub qvel: [f64; 6],
    /// Position-servo setpoints (rad).
    pub ctrl: [f64; 6],
    /// Tool centre point pose.
    pub tcp: Pose,
    /// Distance between the jaw tips (m).
    pub gripper_opening_m: f64,
}

/// What `set_joint_positions` did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SetJointsReport {
    /// Joints written, as labels.
    pub written: Vec<String>,
    /// Joints whose position servo will pull them back at the next step (written without hold).
    pub pulled_back: Vec<String>,
}

/// Static facts about the compiled model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelInfo {
    /// Arm joints in action-key order.
    pub joints: Vec<JointInfo>,
    /// Keys an ordered action binds to.
    pub action_keys: Vec<String>,
    /// Physics timestep (s).
    pub timestep: f64,
    /// Physics steps per control tick.
    pub substeps_per_tick: u32,
    /// Camera names.
    pub cameras: Vec<String>,
    /// Each camera's own frame size (width, height), in `cameras`' order: a camera profile's,
    /// at which its frames always come; `None` for a camera drawn at the size asked for.
    pub camera_sizes: Vec<Option<(u32, u32)>>,
    /// Largest image the offscreen buffer holds (width, height).
    pub max_image: (u32, u32),
    /// Name of every DOF (Jacobian columns).
    pub dof_names: Vec<String>,
}

impl ModelInfo {
    /// Control ticks per second.
    pub fn control_rate_hz(&self) -> f64 {
        1.0 / (self.timestep * f64::from(self.substeps_per_tick))
    }
}
