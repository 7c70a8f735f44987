//! Every layout of every task is within reach of both arms: from the arm's home, the engine's
//! own IK moves put the TCP over each point the task needs (the red cube and where it goes),
//! at the height a top-down grasp starts from, lock-stepped on the twin (no images).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_episode::MoveStop;
use fakesim_episode::session::within_limits;
use fakesim_episode::tasks::{self, N_INIT_STATES, TASKS};
use fakesim_episode::ticks::{SimTicks, lock_step, move_tcp};
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{ArmType, JointValues, Scene, Sim};

/// Height of the TCP over an object before a grasp descends (as the scripted lift's).
const OVER_Z: f64 = 0.87;
/// Moves of at most this many ticks toward one point (a client would call again on step_cap).
const CALLS: usize = 4;
/// As close as the engine's move counts as reached (m).
const REACHED_M: f64 = 0.008;

/// The points of a layout its task needs the TCP over: the red cube, and where it goes (the
/// bowl, the target, the blue cube); the other objects only stand in the way.
fn points(task_index: u32, init_state_index: u32) -> Vec<(&'static str, [f64; 2])> {
    let layout = tasks::layout(task_index, init_state_index);
    let red = ("cube_red", [layout.cube_red[0], layout.cube_red[1]]);
    match TASKS[task_index as usize].name {
        "cube_in_bowl" => vec![red, ("bowl", layout.bowl)],
        "push_to_target" => vec![red, ("target", layout.target)],
        "stack_cubes" => vec![red, ("cube_blue", [layout.cube_blue[0], layout.cube_blue[1]])],
        "reach_target" => vec![("target", layout.target)],
        _ => vec![red],
    }
}

/// From `arm`'s home, moves the TCP over `point` at height `z`; the distance left (m).
fn miss(sim: &mut Sim, arm: ArmType, point: [f64; 2], z: f64) -> f64 {
    let home = within_limits(arm.spec().home, &sim.joint_ranges());
    sim.set_joint_positions(&JointValues::Ordered(home.to_vec()), true)
        .unwrap();
    let mut left = f64::INFINITY;
    for _ in 0..CALLS {
        let tcp = sim.tcp_pose().pos;
        let delta = [point[0] - tcp[0], point[1] - tcp[1], z - tcp[2]];
        let report = lock_step(move_tcp(&mut SimTicks::new(sim), delta, None, 30, u64::MAX)).unwrap();
        left = report.remaining_distance_m;
        if report.stop != MoveStop::StepCap {
            break;
        }
    }
    left
}

#[test]
fn both_arms_reach_over_every_object_of_every_layout() {
    for arm in ArmType::ALL {
        let mut sim = Sim::load(&Scene::builtin(arm, false), DEFAULT_SUBSTEPS_PER_TICK).unwrap();
        let mut missed = Vec::new();
        for task_index in 0..TASKS.len() as u32 {
            for init_state_index in 0..N_INIT_STATES {
                for (name, point) in points(task_index, init_state_index) {
                    let left = miss(&mut sim, arm, point, OVER_Z);
                    if left > REACHED_M {
                        missed.push(format!(
                            "task {task_index} layout {init_state_index} {name}: {left:.3} m"
                        ));
                    }
                }
            }
        }
        assert!(missed.is_empty(), "{arm} misses {missed:#?}");
    }
}

#[test]
fn reach_target_holds_only_with_the_tool_point_near_the_point_above_the_target() {
    let index = TASKS.iter().position(|task| task.name == "reach_target").unwrap();
    let task = &TASKS[index];
    let arm = ArmType::So101;
    let mut sim = Sim::load(&Scene::builtin(arm, true), DEFAULT_SUBSTEPS_PER_TICK).unwrap();
    for init_state_index in [0, 5, 11] {
        let layout = tasks::layout(index as u32, init_state_index);
        tasks::apply_layout(&mut sim, &layout).unwrap();
        let above = tasks::TABLE_Z + tasks::REACH_HEIGHT;
        // The engine's moves keep the tool pointing down, which leaves a far target's point a
        // centimetre or two short: well within the task's radius.
        let left = miss(&mut sim, arm, layout.target, above + 2.0 * tasks::REACH_RADIUS);
        assert!(
            left < tasks::REACH_RADIUS / 2.0,
            "layout {init_state_index}: {left} m short"
        );
        assert!(
            !tasks::success(task, &sim).unwrap(),
            "layout {init_state_index}: judged reached from too high"
        );
        let left = miss(&mut sim, arm, layout.target, above);
        assert!(
            left < tasks::REACH_RADIUS / 2.0,
            "layout {init_state_index}: {left} m short"
        );
        assert!(
            tasks::success(task, &sim).unwrap(),
            "layout {init_state_index}: not judged reached"
        );
    }
}
