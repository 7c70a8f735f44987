//! Advancing the twin's physics: by control ticks, client periods or a number of steps,
//! holding the setpoints; and the physics step a dynamics profile may ask for.

use super::{MAX_FINER_STEPS, MAX_STEPS_PER_CALL, MAX_SUBSTEPS_PER_ACTION, Sim};
use crate::clock::TickClock;
use crate::error::TwinError;
use crate::values::{Check, JointValues, resolve};
use mujoco_rs::prelude::*;

/// Relative slack on a finer step dividing the model's into a whole number of steps (a step
/// written in decimal, such as 0.0025 s, is not exactly the model's over a whole number).
const WHOLE_RATIO_SLACK: f64 = 1e-9;

impl Sim {
    /// Advances physics by one control tick and refreshes poses and Jacobians for the new state.
    pub fn step_tick(&mut self) {
        self.hold_ctrl(self.substeps_per_tick);
    }

    /// Advances physics by one client tick: the control period in force, or `period_s` for this
    /// tick only (checked with [`crate::clock::check_period`] first), the fraction of a step
    /// carried to the next tick. Returns the physics steps run.
    pub fn step_period(&mut self, period_s: Option<f64>) -> u32 {
        let steps = self.clock.take_tick(period_s);
        self.hold_ctrl(steps);
        steps
    }

    /// The tick clock: the control period in force.
    pub fn clock(&self) -> &TickClock {
        &self.clock
    }

    /// Sets the control period in force (s; 0 is the model's tick) and returns the clock.
    pub fn set_control_period(&mut self, period_s: f64) -> Result<TickClock, TwinError> {
        self.clock.set_period(period_s)?;
        Ok(self.clock)
    }

    /// Advances physics by `n` steps with the setpoints as they are, then refreshes poses and
    /// Jacobians for the new state.
    /// With a dynamics profile's delays, each setpoint reaches its servo that late.
    pub fn hold_ctrl(&mut self, n: u32) {
        if self.delays_anything() {
            self.step_delayed(n);
        } else {
            for _ in 0..n {
                self.data.step();
            }
        }
        self.data.forward();
        self.sample_watch();
        self.offer_snapshot();
    }

    /// Writes servo setpoints and holds them for `n_substeps` physics steps.
    pub fn send_action(&mut self, values: &JointValues, n_substeps: u32) -> Result<(), TwinError> {
        check_substeps(n_substeps)?;
        let ranges = self.ctrl_ranges();
        let pairs = resolve(self.arm(), values, Check::Within(&ranges))?;
        for &(i, v) in &pairs {
            let actuator = self.arms[self.focus].joints[i].actuator;
            self.data.ctrl_mut()[actuator] = v;
        }
        self.hold_ctrl(n_substeps);
        Ok(())
    }

    /// Advances physics by `n` steps with the current setpoints (0 is a no-op).
    pub fn step(&mut self, n: u32) -> Result<(), TwinError> {
        if n > MAX_STEPS_PER_CALL {
            return Err(TwinError::CountOutOfRange {
                what: "n_steps",
                value: u64::from(n),
                lo: 0,
                hi: u64::from(MAX_STEPS_PER_CALL),
            });
        }
        if n > 0 {
            self.hold_ctrl(n);
        }
        Ok(())
    }
}

/// How many physics steps of `step_s` make one of the model's `model_step_s`: a whole number
/// from 1 to [`MAX_FINER_STEPS`], within a relative 1e-9. A step that is not finite and above 0,
/// larger than the model's, or does not divide it into a whole number is refused.
pub fn finer_steps(model_step_s: f64, step_s: f64) -> Result<u32, TwinError> {
    let refused = |why: String| {
        TwinError::Scene(format!(
            "physics step {step_s} s {why}; give the model's step {model_step_s} s divided by a whole number \
             from 1 to {MAX_FINER_STEPS} (as `fakesim-hil identify` writes it in a dynamics profile)"
        ))
    };
    if !(step_s.is_finite() && step_s > 0.0) {
        return Err(refused("is not a finite number of seconds above 0".to_owned()));
    }
    let ratio = model_step_s / step_s;
    let whole = ratio.round();
    if ratio < 1.0 - WHOLE_RATIO_SLACK {
        return Err(refused(format!("is larger than the model's step {model_step_s} s")));
    }
    if (ratio - whole).abs() > WHOLE_RATIO_SLACK * ratio {
        return Err(refused(format!(
            "does not divide the model's step {model_step_s} s into a whole number of steps ({ratio:.4})"
        )));
    }
    if whole > f64::from(MAX_FINER_STEPS) {
        return Err(refused(format!("cuts the model's step into {whole} steps")));
    }
    // A whole number from 1 to MAX_FINER_STEPS.
    Ok(whole as u32)
}

/// Makes `model` step at `step_s` (a dynamics profile's), which must divide its own step
/// ([`finer_steps`]); returns how many of the new steps make one of its old.
pub fn step_at(model: &mut MjModel, step_s: f64) -> Result<u32, TwinError> {
    let finer = finer_steps(model.opt().timestep, step_s)?;
    model.opt_mut().timestep = step_s;
    Ok(finer)
}

/// Refuses an action hold outside `1..=MAX_SUBSTEPS_PER_ACTION` physics steps.
pub fn check_substeps(n_substeps: u32) -> Result<(), TwinError> {
    if (1..=MAX_SUBSTEPS_PER_ACTION).contains(&n_substeps) {
        return Ok(());
    }
    Err(TwinError::CountOutOfRange {
        what: "n_substeps",
        value: u64::from(n_substeps),
        lo: 1,
        hi: u64::from(MAX_SUBSTEPS_PER_ACTION),
    })
}
