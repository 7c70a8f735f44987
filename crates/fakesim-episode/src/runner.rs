//! Runs moves and gripper actions tick by tick on the twin (sim mode: lock-step, no wall clock).

use crate::gripper::{GripperCommand, GripperReport, GripperState};
use crate::motion::{MoveController, MoveReport, MoveTarget};
use fakesim_twin::Sim;
use fakesim_twin::joints::GRIPPER_INDEX;

/// Gripper joint angle of "open" (rad): about 6 cm between the jaw tips, wide enough for the
/// 3 cm task cubes without the moving jaw sweeping the table.
pub const GRIPPER_OPEN_RAD: f64 = 0.6;

/// Servo setpoint that opens or closes the gripper ("close" squeezes to the end of the range).
pub fn gripper_setpoint(sim: &Sim, command: GripperCommand) -> f64 {
    match command {
        GripperCommand::Open => GRIPPER_OPEN_RAD,
        GripperCommand::Close => sim.ctrl_ranges()[GRIPPER_INDEX].lo,
    }
}

/// Moves the TCP toward `target` until a stop reason triggers. `steps_left` must be positive.
pub fn run_move(sim: &mut Sim, target: MoveTarget, cap: u32, steps_left: u64) -> MoveReport {
    let ranges = sim.joint_ranges();
    let mut controller = MoveController::new(sim.tcp_pose(), target);
    let mut left = steps_left;
    let mut ticks = 0u32;
    let mut travel = Vec::new();
    loop {
        let tcp = sim.tcp_pose();
        let targets = controller.joint_targets(&tcp, &sim.arm_qpos(), &sim.arm_ctrl(), &sim.tcp_jacobian(), &ranges);
        sim.set_arm_ctrl(&targets);
        sim.step_tick();
        ticks += 1;
        left = left.saturating_sub(1);
        let now = sim.tcp_pose();
        travel.push(distance(&tcp.pos, &now.pos));
        if let Some(stop) = controller.after_tick(&now, ticks, cap, left) {
            return controller.report(ticks, stop, &now, travel);
        }
    }
}

/// Drives the gripper with its current command until a stop reason triggers. The caller has
/// already called [`GripperState::begin`]; `steps_left` must be positive.
pub fn run_gripper(sim: &mut Sim, state: &mut GripperState, cap: u32, steps_left: u64) -> GripperReport {
    let before = sim.gripper_opening_m();
    let mut ctrl = sim.arm_ctrl();
    ctrl[GRIPPER_INDEX] = gripper_setpoint(sim, state.command());
    sim.set_arm_ctrl(&ctrl);
    let mut left = steps_left;
    let mut ticks = 0u32;
    let mut openings = Vec::new();
    loop {
        sim.step_tick();
        ticks += 1;
        left = left.saturating_sub(1);
        let opening = sim.gripper_opening_m();
        openings.push(opening);
        if let Some(stop) = state.after_tick(opening, ticks, cap, left) {
            return GripperReport {
                executed_steps: ticks,
                stop,
                opening_before_m: before,
                openings_m: openings,
            };
        }
    }
}

/// Straight-line distance between two points (m).
pub fn distance(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}
