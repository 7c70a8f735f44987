//! Twin figures: physics steps per second against a raw `mj_step` loop on the same model in
//! the same run, one control tick per call on `Sim` and through the async handle, FK and
//! Jacobian time. Every line checks that what it counts is what ran (the simulated time).
//! Camera figures are in the `render` bench.
//! Run with `cargo bench -p fakesim-twin --bench twin`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{JointValues, Scene, Sim, TwinConfig, TwinHandle};
use mujoco_rs::prelude::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

const STEPS: u32 = 20_000;
const TICKS: u32 = STEPS / DEFAULT_SUBSTEPS_PER_TICK;
const ROUNDS: usize = 5;

/// Best of a few rounds, to keep the shared machine's noise out of the ratio.
fn best_of(mut f: impl FnMut() -> Duration) -> Duration {
    (0..ROUNDS).map(|_| f()).min().unwrap_or_default()
}

fn per_second(count: u32, d: Duration) -> f64 {
    f64::from(count) / d.as_secs_f64()
}

/// Panics unless `time` is exactly `steps` physics steps of `dt`.
fn check_steps(what: &str, time: f64, steps: u32, dt: f64) {
    let expected = f64::from(steps) * dt;
    assert!(
        (time - expected).abs() < dt * 1e-3,
        "{what}: simulated {time} s, expected {steps} steps = {expected} s"
    );
}

fn main() {
    let sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
    let model = sim.model().clone();
    let dt = model.opt().timestep;
    drop(sim);

    let raw = best_of(|| {
        let mut data = MjData::new(model.clone());
        let start = Instant::now();
        for _ in 0..STEPS {
            data.step();
        }
        let elapsed = start.elapsed();
        check_steps("raw", data.time(), STEPS, dt);
        elapsed
    });
    let twin = best_of(|| {
        let mut sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
        let start = Instant::now();
        sim.step(STEPS).unwrap();
        let elapsed = start.elapsed();
        check_steps("Sim::step", sim.time(), STEPS, dt);
        elapsed
    });
    let sim_ticks = best_of(|| {
        let mut sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
        let start = Instant::now();
        for _ in 0..TICKS {
            sim.step_tick();
        }
        let elapsed = start.elapsed();
        check_steps("Sim::step_tick", sim.time(), TICKS * DEFAULT_SUBSTEPS_PER_TICK, dt);
        elapsed
    });
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let through_handle = best_of(|| {
        runtime.block_on(async {
            let handle = TwinHandle::spawn(TwinConfig::default()).unwrap();
            let start = Instant::now();
            for _ in 0..TICKS {
                handle.with_sim(|sim| sim.step_tick()).await.unwrap();
            }
            let elapsed = start.elapsed();
            let time = handle.with_sim(|sim| sim.time()).await.unwrap();
            check_steps("handle ticks", time, TICKS * DEFAULT_SUBSTEPS_PER_TICK, dt);
            elapsed
        })
    });
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "raw mj_step loop                 {:>10.0} steps/s",
        per_second(STEPS, raw)
    );
    println!(
        "Sim::step                        {:>10.0} steps/s  ({:.3} of raw)",
        per_second(STEPS, twin),
        ratio(raw, twin)
    );
    println!(
        "Sim, one tick ({DEFAULT_SUBSTEPS_PER_TICK} steps) per call   {:>10.0} steps/s  ({:.3} of raw)",
        per_second(STEPS, sim_ticks),
        ratio(raw, sim_ticks)
    );
    println!(
        "handle, one tick per call        {:>10.0} steps/s  ({:.3} of raw, {:.3} of the same ticks on Sim)",
        per_second(STEPS, through_handle),
        ratio(raw, through_handle),
        ratio(sim_ticks, through_handle)
    );

    let mut sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
    sim.set_joint_positions(&JointValues::Ordered(vec![0.2, -0.3, 0.4, 0.1, 0.0, 0.5]), true)
        .unwrap();
    let n = 10_000;
    let fk = best_of(|| {
        let start = Instant::now();
        for _ in 0..n {
            black_box(sim.forward_kinematics(Some("tcp")).unwrap());
        }
        start.elapsed()
    });
    let jac = best_of(|| {
        let start = Instant::now();
        for _ in 0..n {
            black_box(sim.tcp_jacobian());
        }
        start.elapsed()
    });
    println!(
        "forward_kinematics(tcp)          {:>10.2} us",
        fk.as_secs_f64() * 1e6 / f64::from(n)
    );
    println!(
        "tcp Jacobian                     {:>10.2} us",
        jac.as_secs_f64() * 1e6 / f64::from(n)
    );
}
