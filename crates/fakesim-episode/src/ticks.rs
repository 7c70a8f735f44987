//! One tick driver behind every motion: observe the arm, apply targets, end the tick. Moves,
//! gripper actions, `SendAction` and `Tick` are each written once, over [`TickDriver`]; the
//! twin alone ([`SimTicks`], lock-step) and the real arm (in `fakesim-bridge`, real time with
//! the twin mirroring it) implement it.

use crate::gripper::{GripperCommand, GripperReport, GripperState};
use crate::motion::{MoveController, MoveReport, MoveStop, MoveTarget};
use fakesim_twin::joints::GRIPPER_INDEX;
use fakesim_twin::sim::check_substeps;
use fakesim_twin::values::{Bounds, Check, resolve};
use fakesim_twin::{ArmSpec, JointValues, RobotState, Sim, TwinError};
use nalgebra::Matrix3x6;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

/// Gripper joint angle of "open" (rad): about 6 cm between the jaw tips, wide enough for the
/// 3 cm task cubes without the moving jaw sweeping the table.
pub const GRIPPER_OPEN_RAD: f64 = 0.6;

/// The TCP's translational and rotational Jacobians over the arm's joints.
pub type TcpJacobian = (Matrix3x6<f64>, Matrix3x6<f64>);

/// The arm at the start or the end of a tick.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    /// The state (on the real arm: the twin mirroring it).
    pub robot: RobotState,
    /// The goals in force: the twin's setpoints, or the goals last sent to the real arm.
    pub goals: [f64; 6],
    /// A guard found a joint blocked during the call and held the arm (the real arm only):
    /// a move stops there, stalled.
    pub blocked: bool,
}

/// How long applied targets are held.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Hold {
    /// One control tick of the model (the moves' and gripper actions' tick).
    Tick,
    /// This many physics steps (checked against the twin's bound).
    Substeps(u32),
    /// One tick of the client's clock (`Tick`): on the twin the control period in force, or
    /// this period (s, checked by the caller) for this tick only; on the real arm the goals
    /// are sent and the call returns, the client pacing its ticks.
    Period(Option<f64>),
}

/// Ranges a driver's targets must respect.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranges {
    /// Where the move's IK may put each joint.
    pub joints: [Bounds; 6],
    /// Where each servo setpoint may be.
    pub setpoints: [Bounds; 6],
}

/// Runs control ticks on an arm.
pub trait TickDriver {
    /// Why a tick could not run.
    type Error: From<TwinError>;

    /// The ranges targets must respect.
    fn ranges(&self) -> Ranges;

    /// The arm whose joints the targets name.
    fn arm(&self) -> &'static ArmSpec;

    /// The arm now.
    fn observe(&mut self) -> impl Future<Output = Result<Observed, Self::Error>>;

    /// The TCP Jacobian now.
    fn jacobian(&mut self) -> impl Future<Output = Result<TcpJacobian, Self::Error>>;

    /// Applies joint targets (rad, action-key order), holds them for `hold`, and returns the
    /// arm at the end.
    fn apply(&mut self, targets: [f64; 6], hold: Hold) -> impl Future<Output = Result<Observed, Self::Error>>;
}

/// The twin alone, in lock-step on its own thread: every call completes at once.
pub struct SimTicks<'a> {
    sim: &'a mut Sim,
}

impl<'a> SimTicks<'a> {
    /// Ticks on `sim`.
    pub fn new(sim: &'a mut Sim) -> Self {
        SimTicks { sim }
    }

    fn observed(&self) -> Observed {
        let robot = self.sim.robot_state();
        Observed {
            goals: robot.ctrl,
            robot,
            blocked: false,
        }
    }
}

impl TickDriver for SimTicks<'_> {
    type Error = TwinError;

    fn ranges(&self) -> Ranges {
        Ranges {
            joints: self.sim.joint_ranges(),
            setpoints: self.sim.ctrl_ranges(),
        }
    }

    fn arm(&self) -> &'static ArmSpec {
        self.sim.arm()
    }

    async fn observe(&mut self) -> Result<Observed, TwinError> {
        Ok(self.observed())
    }

    async fn jacobian(&mut self) -> Result<TcpJacobian, TwinError> {
        Ok(self.sim.tcp_jacobian())
    }

    async fn apply(&mut self, targets: [f64; 6], hold: Hold) -> Result<Observed, TwinError> {
        self.sim.set_arm_ctrl(&targets);
        match hold {
            Hold::Tick => self.sim.step_tick(),
            Hold::Period(period_s) => {
                self.sim.step_period(period_s);
            }
            Hold::Substeps(n) => {
                check_substeps(n)?;
                self.sim.hold_ctrl(n);
            }
        }
        Ok(self.observed())
    }
}

/// One tick of the client's clock for every arm of the twin at once: each arm's `actions`
/// entry (in the order of [`Sim::arms`]) is written over its goals in force, then physics
/// advances once for all; returns each arm at the end. Every action is checked before any
/// is written, so a refusal changes nothing.
pub fn tick_arms(sim: &mut Sim, actions: &[JointValues], period_s: Option<f64>) -> Result<Vec<Observed>, TwinError> {
    let arms = sim.arms().len();
    if actions.len() != arms {
        return Err(TwinError::Scene(format!(
            "a tick of this twin holds {arms} arm action(s), not {}",
            actions.len()
        )));
    }
    let mut targets = Vec::with_capacity(arms);
    for (index, action) in actions.iter().enumerate() {
        sim.focus(index)?;
        let pairs = resolve(sim.arm(), action, Check::Within(&sim.ctrl_ranges()))?;
        let mut goals = sim.arm_ctrl();
        for (joint, value) in pairs {
            goals[joint] = value;
        }
        targets.push(goals);
    }
    for (index, goals) in targets.iter().enumerate() {
        sim.focus(index)?;
        sim.set_arm_ctrl(goals);
    }
    sim.step_period(period_s);
    (0..arms)
        .map(|index| {
            sim.focus(index)?;
            Ok(SimTicks::new(sim).observed())
        })
        .collect()
}

/// Runs a loop over [`SimTicks`] to its end on this thread: such a loop never waits.
pub fn lock_step<R>(run: impl Future<Output = Result<R, TwinError>>) -> Result<R, TwinError> {
    match pin!(run).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => result,
        Poll::Pending => Err(TwinError::Fault {
            thread: "physics",
            message: "a lock-step tick loop waited for something".to_owned(),
        }),
    }
}

/// Writes `action` over the goals in force and holds it for `hold`: `SendAction` and `Tick`.
/// Returns the arm at the end.
pub async fn act<D: TickDriver>(driver: &mut D, action: &JointValues, hold: Hold) -> Result<Observed, D::Error> {
    if let Hold::Substeps(n) = hold {
        check_substeps(n)?;
    }
    let pairs = resolve(driver.arm(), action, Check::Within(&driver.ranges().setpoints)).map_err(TwinError::from)?;
    let mut targets = driver.observe().await?.goals;
    for (joint, value) in pairs {
        targets[joint] = value;
    }
    driver.apply(targets, hold).await
}

/// Moves the TCP by `delta_xyz` (m), optionally rotating by `delta_rpy` (rad), tick by tick
/// until a stop reason triggers (`stalled` at once when the arm was found blocked).
/// `steps_left` must be positive.
pub async fn move_tcp<D: TickDriver>(
    driver: &mut D,
    delta_xyz: [f64; 3],
    delta_rpy: Option<[f64; 3]>,
    cap: u32,
    steps_left: u64,
) -> Result<MoveReport, D::Error> {
    let limits = driver.ranges().joints;
    let mut at = driver.observe().await?;
    let target = MoveTarget::from_delta(&at.robot.tcp, delta_xyz, delta_rpy);
    let mut controller = MoveController::new(at.robot.tcp, target);
    let (mut ticks, mut left, mut travel) = (0u32, steps_left, Vec::new());
    loop {
        let jacobian = driver.jacobian().await?;
        let targets = controller.joint_targets(&at.robot.tcp, &at.robot.qpos, &at.goals, &jacobian, &limits);
        let after = driver.apply(targets, Hold::Tick).await?;
        ticks += 1;
        left = left.saturating_sub(1);
        travel.push(distance(&at.robot.tcp.pos, &after.robot.tcp.pos));
        let stop = if after.blocked {
            Some(MoveStop::Stalled)
        } else {
            controller.after_tick(&after.robot.tcp, ticks, cap, left)
        };
        if let Some(stop) = stop {
            return Ok(controller.report(ticks, stop, &after.robot.tcp, travel));
        }
        at = after;
    }
}

/// Drives the gripper with the state's command (already begun) until a stop reason
/// triggers. `steps_left` must be positive.
pub async fn drive_gripper<D: TickDriver>(
    driver: &mut D,
    state: &mut GripperState,
    cap: u32,
    steps_left: u64,
) -> Result<GripperReport, D::Error> {
    let setpoints = driver.ranges().setpoints;
    let at = driver.observe().await?;
    let mut goals = at.goals;
    goals[GRIPPER_INDEX] = gripper_setpoint(&setpoints, state.command());
    let (mut ticks, mut left, mut openings) = (0u32, steps_left, Vec::new());
    loop {
        let after = driver.apply(goals, Hold::Tick).await?;
        ticks += 1;
        left = left.saturating_sub(1);
        let opening = after.robot.gripper_opening_m;
        openings.push(opening);
        if let Some(stop) = state.after_tick(opening, ticks, cap, left) {
            return Ok(GripperReport {
                executed_steps: ticks,
                stop,
                opening_before_m: at.robot.gripper_opening_m,
                openings_m: openings,
            });
        }
    }
}

/// Servo setpoint that opens or closes the gripper ("close" squeezes to the end of the range).
fn gripper_setpoint(setpoints: &[Bounds; 6], command: GripperCommand) -> f64 {
    match command {
        GripperCommand::Open => GRIPPER_OPEN_RAD,
        GripperCommand::Close => setpoints[GRIPPER_INDEX].lo,
    }
}

/// Straight-line distance between two points (m).
fn distance(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use fakesim_twin::Scene;

    /// The twin, with every tick reported as blocked (as the real arm's driver reports the
    /// shadow's hold).
    struct Blocked<'a>(SimTicks<'a>);

    impl TickDriver for Blocked<'_> {
        type Error = TwinError;

        fn ranges(&self) -> Ranges {
            self.0.ranges()
        }

        fn arm(&self) -> &'static ArmSpec {
            self.0.arm()
        }

        async fn observe(&mut self) -> Result<Observed, TwinError> {
            self.0.observe().await
        }

        async fn jacobian(&mut self) -> Result<TcpJacobian, TwinError> {
            self.0.jacobian().await
        }

        async fn apply(&mut self, targets: [f64; 6], hold: Hold) -> Result<Observed, TwinError> {
            let after = self.0.apply(targets, hold).await?;
            Ok(Observed { blocked: true, ..after })
        }
    }

    #[test]
    fn a_blocked_arm_ends_a_move_stalled_after_that_tick() {
        let down = [0.0, 0.0, -0.05];
        let mut sim = Sim::load(&Scene::Tabletop, 10).unwrap();
        let free = lock_step(move_tcp(&mut SimTicks::new(&mut sim), down, None, 50, 50)).unwrap();
        assert!(free.executed_steps > 1, "{free:?}");
        let mut sim = Sim::load(&Scene::Tabletop, 10).unwrap();
        let blocked = lock_step(move_tcp(&mut Blocked(SimTicks::new(&mut sim)), down, None, 50, 50)).unwrap();
        assert_eq!((blocked.stop, blocked.executed_steps), (MoveStop::Stalled, 1));
    }
}
