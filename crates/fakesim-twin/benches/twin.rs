//! Twin figures: physics steps per second against a raw `mj_step` loop on the same model in
//! the same run, one control tick through the async handle, FK and Jacobian time, and the
//! time to render a 256x256 camera frame. Run with `cargo bench -p fakesim-twin`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::{JointValues, Scene, Sim, TwinConfig, TwinHandle};
use mujoco_rs::prelude::*;
use std::hint::black_box;
use std::time::{Duration, Instant};

const STEPS: u32 = 20_000;
const ROUNDS: usize = 5;

/// Best of a few rounds, to keep the shared machine's noise out of the ratio.
fn best_of(mut f: impl FnMut() -> Duration) -> Duration {
    (0..ROUNDS).map(|_| f()).min().unwrap_or_default()
}

fn per_second(count: u32, d: Duration) -> f64 {
    f64::from(count) / d.as_secs_f64()
}

fn main() {
    let sim = Sim::load(&Scene::Tabletop, 4).unwrap();
    let model = sim.model().clone();
    drop(sim);

    let raw = best_of(|| {
        let mut data = MjData::new(model.clone());
        let start = Instant::now();
        for _ in 0..STEPS {
            data.step();
        }
        start.elapsed()
    });
    let twin = best_of(|| {
        let mut sim = Sim::load(&Scene::Tabletop, 4).unwrap();
        let start = Instant::now();
        sim.step(STEPS).unwrap();
        start.elapsed()
    });
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let handle = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let ticks = STEPS / 4;
    let through_handle = best_of(|| {
        runtime.block_on(async {
            let start = Instant::now();
            for _ in 0..ticks {
                handle.with_sim(|sim| sim.step_tick()).await.unwrap();
            }
            start.elapsed()
        })
    });
    println!("raw mj_step loop           {:>10.0} steps/s", per_second(STEPS, raw));
    println!(
        "Sim::step                  {:>10.0} steps/s  ({:.3} of raw)",
        per_second(STEPS, twin),
        raw.as_secs_f64() / twin.as_secs_f64()
    );
    println!(
        "handle, one tick per call  {:>10.0} steps/s  ({:.3} of raw)",
        per_second(STEPS, through_handle),
        raw.as_secs_f64() / through_handle.as_secs_f64()
    );

    let mut sim = Sim::load(&Scene::Tabletop, 4).unwrap();
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
        "forward_kinematics(tcp)    {:>10.2} us",
        fk.as_secs_f64() * 1e6 / f64::from(n)
    );
    println!(
        "tcp Jacobian               {:>10.2} us",
        jac.as_secs_f64() * 1e6 / f64::from(n)
    );

    runtime.block_on(async {
        for camera in ["agentview", "robot0_eye_in_hand"] {
            match handle.render(camera, 256, 256, false).await {
                Err(e) => println!("render {camera}: {e}"),
                Ok(_) => {
                    let frames = 20;
                    let start = Instant::now();
                    for _ in 0..frames {
                        black_box(handle.render(camera, 256, 256, false).await.unwrap());
                    }
                    let each = start.elapsed().as_secs_f64() * 1e3 / f64::from(frames);
                    println!("render {camera:<19} {each:>10.2} ms per 256x256 RGB frame");
                }
            }
        }
    });
}
