//! The live twin's transport delay: with a dynamics profile, each joint's setpoint drives its
//! servo the profile's `delay_s` after it was written, as a goal written on the arm's bus does
//! ([`feetech::delay`], the one meaning every model of the arm gives the delay). The setpoints
//! written stay in `ctrl` for every reader (the state, the preview, the snapshots); only the
//! physics steps see them late.

use super::Sim;

impl Sim {
    /// Whether any arm holds its setpoints back.
    pub(super) fn delays_anything(&self) -> bool {
        self.arms.iter().any(|arm| arm.line.longest() > 0.0)
    }

    /// Advances `n` physics steps with each arm's setpoints held back by its joints' delays,
    /// then puts the setpoints as written back in `ctrl`.
    pub(super) fn step_delayed(&mut self, n: u32) {
        let t0 = self.data.time();
        let dt = self.model().opt().timestep;
        let written: Vec<[f64; 6]> = self
            .arms
            .iter()
            .map(|arm| std::array::from_fn(|i| self.data.ctrl()[arm.joints[i].actuator]))
            .collect();
        for (arm, targets) in self.arms.iter_mut().zip(&written) {
            arm.line.write(t0, *targets);
        }
        for _ in 0..n {
            let t = self.data.time();
            for arm in &self.arms {
                for (i, joint) in arm.joints.iter().enumerate() {
                    self.data.ctrl_mut()[joint.actuator] = arm.line.acting_over(i, t, t + dt);
                }
            }
            self.data.step();
        }
        let now = self.data.time();
        for (arm, targets) in self.arms.iter_mut().zip(&written) {
            for (i, joint) in arm.joints.iter().enumerate() {
                self.data.ctrl_mut()[joint.actuator] = targets[i];
            }
            arm.line.forget_before(now);
        }
    }

    /// Forgets arm `index`'s setpoint history: its setpoints now in force act at once (a reset,
    /// a restored state, a pose taken as setpoint).
    pub(super) fn restart_delays(&mut self, index: usize) {
        if let Some(arm) = self.arms.get_mut(index) {
            let ctrl = self.data.ctrl();
            arm.line.restart(std::array::from_fn(|i| ctrl[arm.joints[i].actuator]));
        }
    }

    /// [`Sim::restart_delays`] of every arm.
    pub(super) fn restart_all_delays(&mut self) {
        (0..self.arms.len()).for_each(|index| self.restart_delays(index));
    }

    /// The setpoints of the arm in focus on their way to its servos.
    pub(crate) fn delay_line(&self) -> &feetech::delay::DelayLine<6> {
        &self.slot().line
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use crate::dynamics::Dynamics;
    use crate::{ArmType, Scene, Sim};

    /// The SO-101 alone, its defaults with every joint's delay `delay_s`.
    fn sim(delay_s: f64) -> Sim {
        let scene = Scene::builtin(ArmType::So101, false);
        let plain = Sim::load(&scene, 1).unwrap();
        let mut dynamics = Dynamics::read(plain.model(), ArmType::So101.spec()).unwrap();
        dynamics.joints.iter_mut().for_each(|j| j.delay_s = delay_s);
        Sim::load_with(&scene, 1, Some(&dynamics)).unwrap()
    }

    #[test]
    fn a_setpoint_reaches_the_servo_after_the_profiles_delay() {
        let (mut late, mut prompt) = (sim(0.02), sim(0.0));
        let start = late.arm_qpos();
        let mut goal = start;
        goal[0] += 0.3;
        for twin in [&mut late, &mut prompt] {
            twin.set_arm_ctrl(&goal);
            twin.hold_ctrl(3);
        }
        // 15 ms in: the prompt arm is on its way, the late one has not felt the goal.
        assert!(prompt.arm_qpos()[0] - start[0] > 1e-3, "{:?}", prompt.arm_qpos());
        assert!((late.arm_qpos()[0] - start[0]).abs() < 1e-6, "{:?}", late.arm_qpos());
        assert_eq!(late.arm_ctrl()[0], goal[0], "the setpoint as written stays readable");
        // 20 ms on, the late arm has moved as the prompt one did 20 ms earlier (measured
        // 8.958 against 8.966 mrad: the rest of the arm stood 20 ms longer).
        late.hold_ctrl(4);
        let mut earlier = sim(0.0);
        earlier.set_arm_ctrl(&goal);
        earlier.hold_ctrl(3);
        let (a, b) = (late.arm_qpos()[0] - start[0], earlier.arm_qpos()[0] - start[0]);
        assert!((a - b).abs() < 1e-2 * b, "{a} rad against {b} rad");
    }

    #[test]
    fn a_reset_forgets_the_setpoints_in_flight() {
        let mut twin = sim(0.02);
        let start = twin.arm_qpos();
        let mut goal = start;
        goal[0] += 0.3;
        twin.set_arm_ctrl(&goal);
        twin.hold_ctrl(1);
        twin.reset();
        twin.hold_ctrl(8);
        assert!((twin.arm_qpos()[0] - start[0]).abs() < 1e-3, "{:?}", twin.arm_qpos());
    }
}
