//! The physics twin itself: a MuJoCo model and data with the SO-101 verbs, used on one thread.

use crate::board::Board;
use crate::cameras::CameraProfile;
use crate::clock::TickClock;
use crate::dynamics::{Dynamics, joint_addresses};
use crate::error::TwinError;
use crate::scene::Scene;
use crate::tap::TickObserver;
use crate::values::{Bounds, Check, JointValues, resolve};
use crate::watch::Watch;
use arms::ArmSlot;
use fakesim_arm::joints::Joint;
use mujoco_rs::mujoco_c::mjtState;
use mujoco_rs::prelude::*;
use nalgebra::Vector3;
use std::collections::HashMap;
use std::sync::Arc;

mod arms;
mod delay;
mod inspect;
mod names;
mod observe;
mod state;
mod steps;
mod types;

pub use steps::{check_substeps, finer_steps, step_at};
pub use types::*;

/// Physics steps one control tick holds a command for, by default (0.005 s each: 20 Hz control).
pub const DEFAULT_SUBSTEPS_PER_TICK: u32 = 10;
/// Most steps one `step` call may run.
pub const MAX_STEPS_PER_CALL: u32 = 100_000;
/// Most physics steps one action may hold its setpoints for (5 s of simulated time at the
/// default 5 ms timestep; the same span of real time with the arm in the loop).
pub const MAX_SUBSTEPS_PER_ACTION: u32 = 1_000;
/// Most physics steps a finer step may cut one of the model's into.
pub const MAX_FINER_STEPS: u32 = 100;
/// Site at the tool centre point, between the fingertips.
pub const TCP_SITE: &str = "tcp";
/// Site on the tip of the fixed jaw.
pub const FIXED_JAW_SITE: &str = "fixed_jaw_tip";
/// Site on the tip of the moving jaw.
pub const MOVING_JAW_SITE: &str = "moving_jaw_tip";

/// State parts a named snapshot keeps: everything that evolves plus mocap and controls.
pub(crate) const SAVED_STATE: u32 = mjtState::mjSTATE_INTEGRATION as u32;
/// State parts the renderer needs to draw a frame.
pub(crate) const RENDER_STATE: u32 =
    mjtState::mjSTATE_QPOS as u32 | mjtState::mjSTATE_MOCAP_POS as u32 | mjtState::mjSTATE_MOCAP_QUAT as u32;

/// A state kept by [`Sim::save_state`].
struct Saved {
    state: Box<[f64]>,
    carry: f64,
}

/// The positions a renderer needs to draw the current scene.
#[derive(Debug, Clone)]
pub struct RenderSnapshot(pub(crate) Box<[f64]>);

/// The twin's model and data. Not shared: one thread owns it (see [`crate::TwinHandle`]).
pub struct Sim {
    /// The arms in the scene, left first in a pair; never empty.
    arms: Vec<ArmSlot>,
    /// The arm the per-arm verbs act on (an index into `arms`; see [`Sim::focus`]).
    focus: usize,
    model: Arc<MjModel>,
    pub(crate) data: MjData<Arc<MjModel>>,
    saved: HashMap<String, Saved>,
    substeps_per_tick: u32,
    clock: TickClock,
    watch: Watch,
    /// The preview's scratch data, made at the first preview.
    pub(crate) scratch: Option<Box<crate::preview::Scratch>>,
    /// Who is handed a snapshot after every physics advance, if anyone.
    observer: Option<TickObserver>,
}

impl Sim {
    /// Loads a scene, checks it has each arm's joints, actuators and sites, and settles the
    /// servo setpoints on the initial pose.
    pub fn load(scene: &Scene, substeps_per_tick: u32) -> Result<Self, TwinError> {
        Self::load_with(scene, substeps_per_tick, None)
    }

    /// As [`Sim::load`], with `dynamics` (when given) in every arm's joints in place of the
    /// model's own (see [`crate::dynamics`]; the delay is the caller's to apply).
    pub fn load_with(scene: &Scene, substeps_per_tick: u32, dynamics: Option<&Dynamics>) -> Result<Self, TwinError> {
        let each = vec![dynamics.copied(); scene.arms().len()];
        Self::load_each(scene, substeps_per_tick, &each, None)
    }

    /// As [`Sim::load`], with `dynamics[i]` (when given) in the joints of the scene's arm `i`
    /// (left first in a pair) in place of the model's own; arms past the list keep theirs. The
    /// delays hold back each setpoint on its way to the servo, in the live twin's steps and in
    /// the preview's. With `physics_step_s` (a dynamics profile's), physics steps at it instead
    /// of the model's step, which it must divide ([`finer_steps`]): a tick holds that many more
    /// steps, so its period is unchanged.
    pub fn load_each(
        scene: &Scene,
        substeps_per_tick: u32,
        dynamics: &[Option<Dynamics>],
        physics_step_s: Option<f64>,
    ) -> Result<Self, TwinError> {
        Self::load_dressed(scene, substeps_per_tick, dynamics, physics_step_s, &[], &[])
    }

    /// As [`Sim::load_each`], with each camera profile a camera of the model and each board in
    /// the scene (see [`Scene::compile_with`]).
    pub fn load_dressed(
        scene: &Scene,
        substeps_per_tick: u32,
        dynamics: &[Option<Dynamics>],
        physics_step_s: Option<f64>,
        cameras: &[CameraProfile],
        boards: &[Board],
    ) -> Result<Self, TwinError> {
        let mut model = scene.compile_with(cameras, boards)?;
        let mut substeps_per_tick = substeps_per_tick.max(1);
        if let Some(step) = physics_step_s {
            let finer = step_at(&mut model, step)?;
            substeps_per_tick = substeps_per_tick.checked_mul(finer).ok_or_else(|| {
                TwinError::Scene(format!(
                    "{substeps_per_tick} physics steps per tick, each cut into {finer} of {step} s, are more \
                     than a tick can hold; use fewer steps per tick or a coarser step"
                ))
            })?;
        }
        for (spec, dynamics) in scene.arms().into_iter().zip(dynamics) {
            if let Some(dynamics) = dynamics {
                let at = joint_addresses(&model, spec)?;
                dynamics.apply(&mut model, &at);
            }
        }
        let model = Arc::new(model);
        let mut arms = scene
            .arms()
            .into_iter()
            .map(|spec| ArmSlot::find(&model, spec))
            .collect::<Result<Vec<_>, _>>()?;
        for (slot, dynamics) in arms.iter_mut().zip(dynamics) {
            if let Some(dynamics) = dynamics {
                slot.line = feetech::delay::DelayLine::new(dynamics.joints.map(|j| j.delay_s), [0.0; 6]);
            }
        }
        let data = MjData::new(model.clone());
        let mut sim = Sim {
            arms,
            focus: 0,
            clock: TickClock::new(model.opt().timestep, substeps_per_tick),
            model,
            data,
            saved: HashMap::new(),
            substeps_per_tick,
            watch: Watch::default(),
            scratch: None,
            observer: None,
        };
        sim.reset();
        Ok(sim)
    }

    /// Back to the model's initial state with servo setpoints on the initial pose; the tick
    /// clock owes nothing (its period stays).
    pub fn reset(&mut self) {
        self.clock.restore_carry(0.0);
        self.data.reset();
        self.data.forward();
        // Infallible per arm: the setpoints are clamped into range.
        let _ = self.every_arm(|sim| {
            let qpos = sim.arm_qpos();
            sim.set_arm_ctrl(&qpos);
            Ok(())
        });
        self.restart_all_delays();
    }

    /// The compiled model.
    pub fn model(&self) -> &Arc<MjModel> {
        &self.model
    }

    /// Static facts about the model.
    pub fn model_info(&self) -> ModelInfo {
        let global = &self.model.vis().global;
        ModelInfo {
            joints: self.slot().joints.clone(),
            action_keys: self.slot().joints.iter().map(|j| j.id.clone()).collect(),
            timestep: self.model.opt().timestep,
            substeps_per_tick: self.substeps_per_tick,
            cameras: self.names(MjtObjBase::mjOBJ_CAMERA, self.model.ffi().ncam as usize),
            camera_sizes: crate::cameras::frame_sizes(&self.model),
            max_image: (
                u32::try_from(global.offwidth).unwrap_or(0),
                u32::try_from(global.offheight).unwrap_or(0),
            ),
            dof_names: self.dof_names(),
        }
    }

    /// Arm joint ranges, action-key order.
    pub fn joint_ranges(&self) -> [Bounds; 6] {
        std::array::from_fn(|i| self.slot().joints[i].range)
    }

    /// Servo setpoint ranges, action-key order.
    pub fn ctrl_ranges(&self) -> [Bounds; 6] {
        std::array::from_fn(|i| self.slot().joints[i].ctrl_range)
    }

    /// Joint ranges narrowed by the setpoint ranges: where `set_joint_positions` with hold may
    /// put a joint, action-key order.
    pub fn settable_ranges(&self) -> [Bounds; 6] {
        let (joints, ctrl) = (self.joint_ranges(), self.ctrl_ranges());
        std::array::from_fn(|i| Bounds {
            lo: joints[i].lo.max(ctrl[i].lo),
            hi: joints[i].hi.min(ctrl[i].hi),
        })
    }

    /// Joint positions (rad), action-key order.
    pub fn arm_qpos(&self) -> [f64; 6] {
        let qpos = self.data.qpos();
        std::array::from_fn(|i| qpos[self.slot().joints[i].qpos_adr])
    }

    /// Joint velocities (rad/s), action-key order.
    pub fn arm_qvel(&self) -> [f64; 6] {
        let qvel = self.data.qvel();
        std::array::from_fn(|i| qvel[self.slot().joints[i].dof_adr])
    }

    /// Each arm joint's qpos address, DOF address and actuator, action-key order.
    pub(crate) fn joint_addresses(&self) -> [(usize, usize, usize); 6] {
        std::array::from_fn(|i| {
            (
                self.slot().joints[i].qpos_adr,
                self.slot().joints[i].dof_adr,
                self.slot().joints[i].actuator,
            )
        })
    }

    /// Servo setpoints (rad), action-key order.
    pub fn arm_ctrl(&self) -> [f64; 6] {
        let ctrl = self.data.ctrl();
        std::array::from_fn(|i| ctrl[self.slot().joints[i].actuator])
    }

    /// Sets every servo setpoint, clamped into its range (callers validate before this).
    pub fn set_arm_ctrl(&mut self, targets: &[f64; 6]) {
        let ranges = self.ctrl_ranges();
        let ctrl = self.data.ctrl_mut();
        for (i, joint) in self.arms[self.focus].joints.iter().enumerate() {
            ctrl[joint.actuator] = targets[i].clamp(ranges[i].lo, ranges[i].hi);
        }
    }

    /// Physics steps per control tick.
    pub fn substeps_per_tick(&self) -> u32 {
        self.substeps_per_tick
    }

    /// Simulated time (s).
    pub fn time(&self) -> f64 {
        self.data.time()
    }

    /// Tool centre point pose in the world.
    pub fn tcp_pose(&self) -> Pose {
        self.site_pose(self.slot().tcp_site)
    }

    /// Distance between the jaw tips (m).
    pub fn gripper_opening_m(&self) -> f64 {
        let xpos = self.data.site_xpos();
        let (fixed, moving) = self.slot().jaw_sites;
        let a = Vector3::from(xpos[fixed]);
        let b = Vector3::from(xpos[moving]);
        (a - b).norm()
    }

    /// Translational and rotational Jacobians of the TCP over the six arm DOFs.
    pub fn tcp_jacobian(&self) -> (nalgebra::Matrix3x6<f64>, nalgebra::Matrix3x6<f64>) {
        let nv = self.model.ffi().nv as usize;
        let (jacp, jacr) = self.data.jac_site(true, true, self.slot().tcp_site);
        let pick = |m: &[f64]| {
            nalgebra::Matrix3x6::from_fn(|r, c| m.get(r * nv + self.slot().joints[c].dof_adr).copied().unwrap_or(0.0))
        };
        (pick(&jacp), pick(&jacr))
    }

    /// Everything the caller can read about the arm now.
    pub fn robot_state(&self) -> RobotState {
        RobotState {
            time: self.time(),
            qpos: self.arm_qpos(),
            qvel: self.arm_qvel(),
            ctrl: self.arm_ctrl(),
            tcp: self.tcp_pose(),
            gripper_opening_m: self.gripper_opening_m(),
        }
    }

    /// Teleports joints (all-or-nothing); with `hold` the position servos take the pose as setpoint.
    pub fn set_joint_positions(&mut self, values: &JointValues, hold: bool) -> Result<SetJointsReport, TwinError> {
        let ranges = self.joint_ranges();
        let pairs = resolve(self.arm(), values, Check::Within(&ranges))?;
        if hold {
            let ctrl_ranges = self.ctrl_ranges();
            let beyond: Vec<_> = pairs
                .iter()
                .filter(|(i, v)| *v < ctrl_ranges[*i].lo || *v > ctrl_ranges[*i].hi)
                .collect();
            if let Some(&&(i, v)) = beyond.first() {
                let b = ctrl_ranges[i];
                return Err(crate::values::out_of_range(&self.arm().label(Joint::ALL[i]), v, b.lo, b.hi).into());
            }
        }
        for &(i, v) in &pairs {
            let joint = &self.arms[self.focus].joints[i];
            self.data.qpos_mut()[joint.qpos_adr] = v;
            self.data.qvel_mut()[joint.dof_adr] = 0.0;
            if hold {
                self.data.ctrl_mut()[joint.actuator] = v;
            }
        }
        if hold {
            self.restart_delays(self.focus);
        }
        self.data.forward();
        self.sample_watch();
        let arm = self.arm();
        let labels = |pairs: &[(usize, f64)]| pairs.iter().map(|(i, _)| arm.label(Joint::ALL[*i])).collect();
        Ok(SetJointsReport {
            written: labels(&pairs),
            pulled_back: if hold { Vec::new() } else { labels(&pairs) },
        })
    }

    /// Writes joint velocities (rad/s), all-or-nothing.
    pub fn set_joint_velocities(&mut self, values: &JointValues) -> Result<(), TwinError> {
        let pairs = resolve(self.arm(), values, Check::Finite)?;
        for &(i, v) in &pairs {
            let adr = self.arms[self.focus].joints[i].dof_adr;
            self.data.qvel_mut()[adr] = v;
        }
        self.data.forward();
        Ok(())
    }
}

/// A name on its way to MuJoCo, which reads names as C strings: one with a NUL byte is refused
/// here (MuJoCo's bindings would panic on it). Every lookup by a name from outside goes through
/// this.
fn model_name<'a>(kind: &'static str, name: &'a str) -> Result<&'a str, TwinError> {
    if name.contains('\0') {
        return Err(TwinError::InvalidName {
            kind,
            name: name.to_owned(),
        });
    }
    Ok(name)
}
