//! One transport delay everywhere: the same goal stream (the start pose held, then a step of
//! the shoulder's goal written at 100 ms) with a delay of 21.25 ms on every joint (eight and a
//! half physics steps of 2.5 ms), run through each model of the arm — the twin, its preview, the
//! shadow's rollout, the fit's replay and the emulator — acts at the same moment in each:
//! nothing differs from holding the start pose until the goal's write plus the delay. The
//! physics step the goal arrives in feels half of it (the time-weighted mean), by the same
//! amount in each model that steps MuJoCo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_bridge::hil::{Shadow, ShadowConfig, ShadowInput, ShadowModel};
use fakesim_identify::Recording;
use fakesim_identify::replay::{PHYSICS_STEP_S, Replayer};
use fakesim_identify::split::Segment;
use fakesim_twin::preview::PreviewRequest;
use fakesim_twin::{ArmType, Dynamics, JointValues, Scene, Sim, StartState};
use feetech::control_table as ct;
use feetech::protocol::instruction;
use feetech_emu::{Response, ServoBus, VirtualSo101};
use std::time::{Duration, Instant};

const ARM: ArmType = ArmType::So101;
const DELAY_S: f64 = 0.02125;
/// When the step's goal is written (s from the start): a whole number of physics steps.
const WRITE_S: f64 = 0.1;
/// Physics steps of each run: 200 ms.
const STEPS: usize = 80;
/// [`PHYSICS_STEP_S`] exactly.
const STEP: Duration = Duration::from_micros(2500);
/// The step in the shoulder's goal (rad).
const STEP_RAD: f64 = 0.2;

/// The model's own dynamics with every joint `DELAY_S` late.
fn dynamics() -> Dynamics {
    let sim = Sim::load(&Scene::builtin(ARM, false), 1).unwrap();
    let mut d = Dynamics::read(sim.model(), ARM.spec()).unwrap();
    d.joints.iter_mut().for_each(|j| j.delay_s = DELAY_S);
    d
}

/// The goals written at physics step `k` of a run from `start`, with the step or without.
fn goals(start: [f64; 6], k: usize, stepped: bool) -> [f64; 6] {
    let mut goals = start;
    if stepped && k as f64 * PHYSICS_STEP_S >= WRITE_S - 1e-9 {
        goals[0] += STEP_RAD;
    }
    goals
}

/// The first step whose shoulder differs between the run with the step and the one without:
/// the time (s from the start) at its end and the difference (rad); `trace(stepped)` gives the
/// shoulder after each step.
fn first_felt(trace: impl FnMut(bool) -> Vec<f64>) -> (f64, f64) {
    let mut trace = trace;
    let (with, without) = (trace(true), trace(false));
    let k = with
        .iter()
        .zip(&without)
        .position(|(a, b)| (a - b).abs() > 1e-12)
        .expect("the step was never felt");
    ((k + 1) as f64 * PHYSICS_STEP_S, with[k] - without[k])
}

/// When a model that steps MuJoCo first feels the step: the end of the physics step the goal
/// arrives in (at 121.25 ms, within the step from 120 to 122.5 ms).
const FELT_S: f64 = 0.1225;

/// Checks that `who` first felt the step at `expected` s.
fn assert_felt_at(who: &str, felt: (f64, f64), expected: f64) {
    println!(
        "{who}: the step first felt at {:.2} ms, by {:.3e}",
        felt.0 * 1e3,
        felt.1
    );
    assert!(
        (felt.0 - expected).abs() < 1e-6,
        "{who}: felt at {} s, expected {expected} s",
        felt.0
    );
}

/// Checks that `who` first felt the step as the twin does, when and by how much (1 %).
fn assert_felt(who: &str, felt: (f64, f64)) {
    assert_felt_at(who, felt, FELT_S);
    let twin = twin_felt();
    assert!(
        (felt.1 - twin.1).abs() <= 0.01 * twin.1.abs(),
        "{who}: by {} rad, the twin by {} rad",
        felt.1,
        twin.1
    );
}

/// The twin with the delays, stepping at the fit's step.
fn twin() -> Sim {
    Sim::load_each(
        &Scene::builtin(ARM, false),
        1,
        &[Some(dynamics())],
        Some(PHYSICS_STEP_S),
    )
    .unwrap()
}

/// The pose every run starts from, at rest: the twin's initial one.
fn rest() -> [f64; 6] {
    twin().arm_qpos()
}

/// When and by how much the twin first feels the step.
fn twin_felt() -> (f64, f64) {
    first_felt(|stepped: bool| {
        let mut sim = twin();
        let start = sim.arm_qpos();
        (0..STEPS)
            .map(|k| {
                sim.set_arm_ctrl(&goals(start, k, stepped));
                sim.hold_ctrl(1);
                sim.arm_qpos()[0]
            })
            .collect()
    })
}

#[test]
fn the_twin_acts_on_a_goal_its_delay_after_the_write() {
    let felt = twin_felt();
    assert_felt_at("twin", felt, FELT_S);
    assert!(felt.1 > 0.0, "{felt:?}");
}

#[test]
fn the_preview_acts_on_a_goal_its_delay_after_the_write() {
    let mut sim = twin();
    let start = sim.arm_qpos();
    // A chunk of one-step actions, previewed to each length in turn: the pose it ends at.
    let trace = |stepped: bool| {
        (1..=STEPS)
            .map(|n| {
                let request = PreviewRequest {
                    start: Some(StartState {
                        qpos: start,
                        qvel: [0.0; 6],
                        ctrl: Some(start),
                    }),
                    actions: (0..n)
                        .map(|k| JointValues::Ordered(goals(start, k, stepped).to_vec()))
                        .collect(),
                    substeps_per_action: Some(1),
                    ..PreviewRequest::new(Vec::new(), 0)
                };
                sim.preview(&request).unwrap().joints[0].final_qpos
            })
            .collect::<Vec<f64>>()
    };
    assert_felt("preview", first_felt(trace));
}

/// A recording of the start pose read every physics step, with the goal stream written.
fn recording(start: [f64; 6], stepped: bool) -> Recording {
    let times = (0..=STEPS).map(|k| k as f64 * PHYSICS_STEP_S);
    Recording {
        name: "one delay".into(),
        arm: ARM,
        goals: times
            .clone()
            .enumerate()
            .map(|(k, t)| (t, goals(start, k, stepped)))
            .collect(),
        readings: times.map(|t| (t, start)).collect(),
        torque: None,
        load: None,
    }
}

#[test]
fn the_fits_replay_acts_on_a_goal_its_delay_after_the_write() {
    let start = rest();
    let segment = Segment {
        recording: 0,
        first: 0,
        last: STEPS,
    };
    let trace = |stepped: bool| {
        let rec = recording(start, stepped);
        Replayer::new(ARM)
            .unwrap()
            .rollout(&rec, &segment, &dynamics(), 1)
            .iter()
            .map(|p| p[0])
            .collect()
    };
    assert_felt("the fit's replay", first_felt(trace));
}

#[test]
fn the_shadow_acts_on_a_goal_its_delay_after_the_write() {
    let start = rest();
    let model = ShadowModel::new(ARM, &dynamics(), Some(PHYSICS_STEP_S)).unwrap();
    let trace = |stepped: bool| {
        let mut shadow =
            Shadow::new(ShadowConfig::default(), Duration::from_millis(50), start).identified(Some(model.clone()));
        let base = Instant::now();
        // Each reading comes with the goals written before it, as the bridge feeds them.
        (0..=STEPS)
            .map(|k| {
                let input = ShadowInput {
                    at: base + STEP * k as u32,
                    measured: start,
                    load_percent: [0.0; 6],
                    goals: Some(goals(start, k.saturating_sub(1), stepped)),
                };
                shadow.observe(&input).0[0].predicted_rad
            })
            .skip(1)
            .collect()
    };
    assert_felt("shadow", first_felt(trace));
}

#[test]
fn the_emulator_acts_on_a_goal_its_delay_after_the_write() {
    let mut config = VirtualSo101::config();
    for servo in &mut config.servos {
        servo.response = Response {
            delay: Duration::from_secs_f64(DELAY_S),
            ..Response::default()
        };
    }
    let trace = |stepped: bool| {
        let (bus, clock) = ServoBus::simulated(&config);
        bus.handle_frame(&instruction::write(1, ct::TORQUE_ENABLE.address, &[1]));
        let start = bus.register(1, &ct::PRESENT_POSITION).unwrap();
        (0..STEPS)
            .map(|k| {
                let goal = if stepped && k as f64 * PHYSICS_STEP_S >= WRITE_S - 1e-9 {
                    start + 130
                } else {
                    start
                };
                let [lo, hi] = (goal as u16).to_le_bytes();
                bus.handle_frame(&instruction::write(1, ct::GOAL_POSITION.address, &[lo, hi]));
                clock.advance(STEP);
                // The goal the servo's loop tracks: the emulator's delayed goal itself.
                f64::from(bus.register(1, &ct::PRESENT_GOAL_POSITION).unwrap())
            })
            .collect()
    };
    // The emulator has no physics step: its loop tracks the goal from the write plus the delay
    // on, seen here at the first read (every 2.5 ms)
    // at or after the write plus the delay (121.25 ms).
    assert_felt_at("emulator", first_felt(trace), FELT_S);
}
