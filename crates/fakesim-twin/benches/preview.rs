//! Preview figures: one previewed control tick and a previewed 50-action chunk, on `Sim` and
//! through the async handle, beside the same ticks run plainly on a `Sim` in the same run (the
//! cost of the physics alone). Every line checks the ticks the preview reports it ran.
//! Run with `cargo bench -p fakesim-twin --bench preview`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::preview::{MAX_PREVIEW_STEPS, PreviewRequest};
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{JointValues, Scene, Sim, TwinConfig, TwinHandle};
use std::time::{Duration, Instant};

/// Previews per round.
const CALLS: u32 = 100;
const ROUNDS: usize = 5;
/// A modest move in free space, and a move that presses the gripper into the table.
const SAFE: [f64; 6] = [0.3, -0.3, 0.3, 0.2, 0.5, 0.5];
const INTO_TABLE: [f64; 6] = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0];

/// Best of a few rounds, to keep the shared machine's noise out of the ratios.
fn best_of(mut f: impl FnMut() -> Duration) -> Duration {
    (0..ROUNDS).map(|_| f()).min().unwrap_or_default()
}

/// `ticks` actions moving linearly from the initial pose to `to`.
fn chunk(to: [f64; 6], ticks: u32) -> Vec<JointValues> {
    (1..=ticks)
        .map(|k| JointValues::Ordered(to.iter().map(|v| v * f64::from(k) / f64::from(ticks)).collect()))
        .collect()
}

/// Milliseconds per call of `CALLS` previews of `request` on a fresh `Sim`.
fn on_sim(request: &PreviewRequest, ticks: u32) -> Duration {
    let mut sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
    best_of(|| {
        let start = Instant::now();
        for _ in 0..CALLS {
            let report = sim.preview(request).unwrap();
            assert_eq!(report.ticks, ticks, "the preview ran {} ticks", report.ticks);
        }
        start.elapsed() / CALLS
    })
}

/// The same ticks run plainly (`send_action`, one per tick) on a `Sim`, per call.
fn plain(actions: &[JointValues]) -> Duration {
    let mut sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
    best_of(|| {
        let start = Instant::now();
        for _ in 0..CALLS {
            sim.reset();
            for action in actions {
                sim.send_action(action, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
            }
        }
        start.elapsed() / CALLS
    })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let one = PreviewRequest::new(chunk(SAFE, 1), 0);
    let fifty = PreviewRequest::new(chunk(SAFE, 50), 0);
    let fifty_table = PreviewRequest::new(chunk(INTO_TABLE, 50), 0);

    let one_sim = on_sim(&one, 1);
    let one_plain = plain(&one.actions);
    let fifty_sim = on_sim(&fifty, 50);
    let fifty_plain = plain(&fifty.actions);
    let fifty_table_sim = on_sim(&fifty_table, 50);
    let longest = PreviewRequest::new(chunk(SAFE, 100), MAX_PREVIEW_STEPS / DEFAULT_SUBSTEPS_PER_TICK - 100);
    let longest_sim = on_sim(&longest, MAX_PREVIEW_STEPS / DEFAULT_SUBSTEPS_PER_TICK);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let one_handle = runtime.block_on(async {
        let handle = TwinHandle::spawn(TwinConfig::default()).unwrap();
        let mut best = Duration::MAX;
        for _ in 0..ROUNDS {
            let start = Instant::now();
            for _ in 0..CALLS {
                let report = handle.preview(one.clone()).await.unwrap();
                assert_eq!(report.ticks, 1);
            }
            best = best.min(start.elapsed() / CALLS);
        }
        handle.shutdown();
        best
    });

    let period = Duration::from_millis(50);
    println!(
        "one tick, preview on Sim              {:>8.3} ms  ({:.3} of the 50 ms hil period; {:.2} of the plain tick)",
        ms(one_sim),
        one_sim.as_secs_f64() / period.as_secs_f64(),
        one_sim.as_secs_f64() / one_plain.as_secs_f64()
    );
    println!(
        "one tick, preview through TwinHandle  {:>8.3} ms  ({:.3} of the 50 ms hil period)",
        ms(one_handle),
        one_handle.as_secs_f64() / period.as_secs_f64()
    );
    println!("one tick, plain send_action on Sim    {:>8.3} ms", ms(one_plain));
    println!(
        "50-action chunk, free space, preview  {:>8.3} ms  ({:.2} of the plain ticks)",
        ms(fifty_sim),
        fifty_sim.as_secs_f64() / fifty_plain.as_secs_f64()
    );
    println!(
        "50-action chunk into the table        {:>8.3} ms  ({:.2} of the free-space chunk)",
        ms(fifty_table_sim),
        fifty_table_sim.as_secs_f64() / fifty_sim.as_secs_f64()
    );
    println!("50 ticks, plain send_action on Sim    {:>8.3} ms", ms(fifty_plain));
    println!(
        "longest preview ({MAX_PREVIEW_STEPS} steps)          {:>8.3} ms  (the preview thread is busy this long)",
        ms(longest_sim)
    );
}
