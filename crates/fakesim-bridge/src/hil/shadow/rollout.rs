//! The shadow's prediction with a dynamics profile loaded: a rollout of the identified model.
//!
//! The arm alone on its table ([`ArmModel`], the model `fakesim-identify` replays recordings
//! on) is compiled once with the profile's stiffness, damping, armature, friction and torque
//! limit, and stepped open-loop alongside the readings: each goal drives its joint's servo the
//! profile's transport delay after it was written ([`feetech::delay`], as in the fit's replays),
//! and the prediction at a reading is the pose of the step around it, extrapolated from the
//! step before. This is the model the fit scored, so the shadow expects exactly what the
//! identified arm does: its slew under the torque limit, its overshoot, gravity's pull and the
//! delay; a cheaper per-joint model fitted alongside would have to approximate all of them. It
//! steps at the profile's physics step, the one the fit's replays ran at (2.5 ms as
//! `fakesim-hil identify` writes it, half the model's), and costs one physics step of the arm
//! alone per physics step of readings: two per 5 ms at 2.5 ms (the `hil` bench times it).

use fakesim_twin::dynamics::{ArmModel, Dynamics, JointAddress};
use fakesim_twin::{ArmType, TwinError};
use feetech::delay::DelayLine;
use mujoco_rs::prelude::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One arm's identified model, ready for shadows to roll out. Cheap to clone.
#[derive(Clone)]
pub struct ShadowModel {
    model: Arc<MjModel>,
    at: [JointAddress; 6],
    delay_s: [f64; 6],
}

impl std::fmt::Debug for ShadowModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShadowModel")
            .field("delay_s", &self.delay_s)
            .finish_non_exhaustive()
    }
}

impl ShadowModel {
    /// Compiles `arm` alone on its table with `dynamics` in its joints, stepping at
    /// `physics_step_s` (the profile's: the step its dynamics were identified at, which must
    /// divide the model's, see [`fakesim_twin::sim::step_at`]; `None`: the model's own).
    /// A few tens of milliseconds: do it at start-up, off the async runtime.
    pub fn new(arm: ArmType, dynamics: &Dynamics, physics_step_s: Option<f64>) -> Result<Self, TwinError> {
        let mut alone = ArmModel::build(arm, physics_step_s)?;
        alone.apply(dynamics);
        Ok(ShadowModel {
            model: Arc::new(alone.model),
            at: alone.at,
            delay_s: dynamics.joints.map(|j| j.delay_s),
        })
    }
}

/// A running rollout: the model's state at `clock`, and the goals in force since when.
#[derive(Debug)]
pub(super) struct Rollout {
    model: ShadowModel,
    data: Physics,
    /// The goals on their way to the servos, timed in seconds from `epoch`.
    line: DelayLine<6>,
    /// The instant the rollout started at: time 0 of `line`.
    epoch: Instant,
    /// The instant the physics state is at; `None` until the rollout starts.
    clock: Option<Instant>,
    /// The joints one physics step before `clock`.
    previous: [f64; 6],
}

/// The rollout's physics data.
struct Physics(MjData<Arc<MjModel>>);

impl std::fmt::Debug for Physics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Physics")
    }
}

impl std::ops::Deref for Physics {
    type Target = MjData<Arc<MjModel>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Physics {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Rollout {
    /// A rollout of `model`, not started.
    pub(super) fn new(model: ShadowModel) -> Self {
        let data = Physics(MjData::new(model.model.clone()));
        Rollout {
            line: DelayLine::new(model.delay_s, [0.0; 6]),
            model,
            data,
            epoch: Instant::now(),
            clock: None,
            previous: [0.0; 6],
        }
    }

    /// Starts over at `at` from `pose` at rest, holding it.
    pub(super) fn start(&mut self, at: Instant, pose: [f64; 6]) {
        self.data.reset();
        for (j, a) in self.model.at.iter().enumerate() {
            self.data.qpos_mut()[a.qpos] = pose[j];
            self.data.ctrl_mut()[a.actuator] = pose[j];
        }
        self.data.forward();
        self.line.restart(pose);
        self.epoch = at;
        self.previous = pose;
        self.clock = Some(at);
    }

    /// Stops the rollout (torque went off).
    pub(super) fn stop(&mut self) {
        self.clock = None;
    }

    /// Takes `goals` as in force since `since` and rolls out to `at`; returns the predicted pose
    /// at `at`. A rollout not started starts at `since` from where the goals were (`from`).
    pub(super) fn advance(&mut self, since: Instant, goals: [f64; 6], at: Instant, from: [f64; 6]) -> [f64; 6] {
        let Some(mut clock) = self.clock else {
            self.start(since, from);
            return self.advance(since, goals, at, from);
        };
        if at.saturating_duration_since(clock) > super::MAX_GAP {
            // A long silence: the state is kept, the time between is not rolled out.
            clock = at - super::MAX_GAP;
        }
        let seconds = |t: Instant| t.saturating_duration_since(self.epoch).as_secs_f64();
        self.line.write(seconds(since.max(clock)), goals);
        let step_s = self.model.model.opt().timestep;
        let dt = Duration::from_secs_f64(step_s);
        let at_ = self.model.at;
        while clock + dt <= at {
            let tau = seconds(clock);
            for (j, a) in at_.iter().enumerate() {
                self.data.ctrl_mut()[a.actuator] = self.line.acting_over(j, tau, tau + step_s);
            }
            self.previous = self.pose();
            self.data.step();
            clock += dt;
        }
        self.clock = Some(clock);
        self.line.forget_before(seconds(clock));
        // The reading lies within the step after `clock`: extrapolate the last step's motion.
        let share = (at - clock).as_secs_f64() / dt.as_secs_f64();
        let now = self.pose();
        std::array::from_fn(|j| now[j] + share * (now[j] - self.previous[j]))
    }

    /// The joints now.
    fn pose(&self) -> [f64; 6] {
        let qpos = self.data.qpos();
        self.model.at.map(|a| qpos[a.qpos])
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use fakesim_twin::Scene;

    /// The SO-101's own dynamics.
    fn defaults() -> Dynamics {
        let model = Scene::builtin(ArmType::So101, false).compile().unwrap();
        Dynamics::read(&model, ArmType::So101.spec()).unwrap()
    }

    /// The physics time a rollout of `model` is at after 50 ms of a goal held still.
    fn time_after_50_ms(model: ShadowModel) -> f64 {
        let pose = [0.0, -1.0, 1.0, 0.5, 0.0, 0.2];
        let mut rollout = Rollout::new(model);
        let at = Instant::now();
        rollout.start(at, pose);
        rollout.advance(at, pose, at + Duration::from_millis(50), pose);
        rollout.data.time()
    }

    #[test]
    fn the_model_steps_at_the_profiles_physics_step() {
        let fine = ShadowModel::new(ArmType::So101, &defaults(), Some(0.0025)).unwrap();
        assert_eq!(fine.model.opt().timestep, 0.0025);
        let own = ShadowModel::new(ArmType::So101, &defaults(), None).unwrap();
        assert_eq!(own.model.opt().timestep, 0.005);
        // 50 ms of readings: 20 steps of 2.5 ms, against 10 of the model's 5 ms.
        let (fine_steps, own_steps) = (time_after_50_ms(fine) / 0.0025, time_after_50_ms(own) / 0.005);
        assert!((fine_steps - 20.0).abs() < 1e-6, "{fine_steps}");
        assert!((own_steps - 10.0).abs() < 1e-6, "{own_steps}");
    }

    #[test]
    fn a_step_that_does_not_divide_the_models_is_refused() {
        for (step, said) in [(0.003, "whole number"), (0.01, "larger"), (-0.0025, "above 0")] {
            let error = ShadowModel::new(ArmType::So101, &defaults(), Some(step))
                .unwrap_err()
                .to_string();
            assert!(
                error.contains(said) && error.contains("fakesim-hil identify"),
                "{step}: {error}"
            );
        }
    }
}
