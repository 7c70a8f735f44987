//! Open-loop replay: a segment's recorded goals run on the twin under given dynamics, from the
//! segment's measured start, predicting each reading. One [`Replayer`] per worker thread.

use crate::recording::Recording;
use crate::split::Segment;
use fakesim_twin::dynamics::{ArmModel, Dynamics};
use fakesim_twin::values::Bounds;
use fakesim_twin::{ArmType, TwinError};
use mujoco_rs::prelude::*;

/// Half-width of the window the start velocity is estimated over (s).
const VELOCITY_WINDOW_S: f64 = 0.01;

/// The physics step of the replays and of [`crate::synth`]'s recordings (s): half the twin
/// model's 5 ms. At the model's step a stiff servo's stiffness, which MuJoCo integrates
/// explicitly (its implicit integrators take only the velocity derivatives), is close to the
/// step's limit; with the force limit clamping it the steps ring and the replays turn chaotic: a
/// torque limit moved by a share of 1e-8 moved a joint by 0.65 mrad. At half the step the
/// replays are smooth (a change moves them in proportion), see the manual's "How close a fit
/// gets".
pub const PHYSICS_STEP_S: f64 = 0.0025;

/// `arm` alone on its table ([`ArmModel`], the model the shadow runs too), stepping at
/// [`PHYSICS_STEP_S`].
pub fn model(arm: ArmType) -> Result<ArmModel, TwinError> {
    ArmModel::build(arm, Some(PHYSICS_STEP_S))
}

/// The twin's arm alone on its table, with a model of its own to put dynamics in.
pub struct Replayer {
    arm: ArmModel,
}

impl Replayer {
    /// Loads `arm`'s built-in scene without the task objects ([`model`]).
    pub fn new(arm: ArmType) -> Result<Self, TwinError> {
        Ok(Replayer { arm: model(arm)? })
    }

    /// The physics step of the replays (s).
    pub fn timestep(&self) -> f64 {
        self.arm.timestep()
    }

    /// The dynamics the model was compiled with (the MJCF's defaults; no delay).
    pub fn defaults(&self, arm: ArmType) -> Result<Dynamics, TwinError> {
        Dynamics::read(&self.arm.model, arm.spec())
    }

    /// Each joint's range, action-key order.
    pub fn ranges(&self) -> [Bounds; 6] {
        self.arm.ranges()
    }

    /// Replays `seg` of `rec` under `dynamics` and returns the predicted positions at readings
    /// `seg.first + stride`, `seg.first + 2 stride`, … up to `seg.last`.
    pub fn rollout(&mut self, rec: &Recording, seg: &Segment, dynamics: &Dynamics, stride: usize) -> Vec<[f64; 6]> {
        self.arm.apply(dynamics);
        let model = &self.arm.model;
        let at = self.arm.at;
        let dt = model.opt().timestep;
        let mut data = MjData::new(model);
        let (t0, start) = rec.readings[seg.first];
        let delay = dynamics.joints.map(|d| d.delay_s);
        let longest = delay.iter().copied().fold(0.0, f64::max);
        let line = rec.delay_line(delay, t0 - longest - dt, rec.readings[seg.last].0, start);
        let velocity = start_velocity(rec, seg.first);
        for (j, a) in at.iter().enumerate() {
            data.qpos_mut()[a.qpos] = start[j];
            data.qvel_mut()[a.dof] = velocity[j];
        }
        let mut tau = t0;
        let mut prev = start;
        let mut now = start;
        let mut out = Vec::with_capacity((seg.last - seg.first) / stride.max(1) + 1);
        for k in compared(seg, stride) {
            let tk = rec.readings[k].0;
            while tau < tk - 1e-9 {
                for (j, a) in at.iter().enumerate() {
                    data.ctrl_mut()[a.actuator] = line.acting_over(j, tau, tau + dt);
                }
                data.step();
                tau += dt;
                prev = now;
                let qpos = data.qpos();
                now = at.map(|a| qpos[a.qpos]);
            }
            let w = ((tk - (tau - dt)) / dt).clamp(0.0, 1.0);
            out.push(std::array::from_fn(|j| prev[j] + w * (now[j] - prev[j])));
        }
        out
    }
}

/// The measured velocity at reading `k`: the slope across a window of about ±10 ms.
pub(crate) fn start_velocity(rec: &Recording, k: usize) -> [f64; 6] {
    slope(rec, window(rec, k, VELOCITY_WINDOW_S))
}

/// The first and last readings of a window of about ±`half_s` about reading `k` (at least one
/// reading either way, within the recording), the readings' period taken beside `k`.
pub(crate) fn window(rec: &Recording, k: usize, half_s: f64) -> (usize, usize) {
    let next = rec.readings.get(k + 1).or(rec.readings.get(k.wrapping_sub(1)));
    let period = next.map_or(1.0, |r| (r.0 - rec.readings[k].0).abs()).max(1e-6);
    let w = ((half_s / period).round() as usize).max(1);
    (k.saturating_sub(w), (k + w).min(rec.readings.len() - 1))
}

/// The measured positions' slope from reading `a` to reading `b` (0 where no time passes).
pub(crate) fn slope(rec: &Recording, (a, b): (usize, usize)) -> [f64; 6] {
    let span = rec.readings[b].0 - rec.readings[a].0;
    if span <= 0.0 {
        return [0.0; 6];
    }
    std::array::from_fn(|j| (rec.readings[b].1[j] - rec.readings[a].1[j]) / span)
}

/// The readings a rollout with `stride` predicts, as indices into the recording's readings.
pub fn compared(seg: &Segment, stride: usize) -> impl Iterator<Item = usize> {
    (seg.first + stride.max(1)..=seg.last).step_by(stride.max(1))
}
