//! Hardware-in-the-loop figures on a virtual SO-101 over a pseudo-terminal with wire timing on:
//! the mirror loop's rate, the latency from a servo moving to the twin showing it (p50, p99; as a
//! task waiting on the samples sees it and as the samples' timestamps tell, with the breakdown of
//! the slowest 1 %),
//! the shadow's work per reading against the mirror step it runs in, and the same 5 cm move in
//! `hil` (real-time ticks on the arm) against `sim` (lock-step).
//! Run with `cargo bench -p fakesim-bridge --bench hil`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_arm::Arm;
use fakesim_arm::Joint;
use fakesim_bridge::hil::{
    BridgeActuation, BridgeConfig, BridgeParts, HardwareBridge, Mode, Sample, Shadow, ShadowConfig, ShadowInput,
    ShadowModel, SyncOption,
};
use fakesim_bridge::twin::ScratchTwinKinematics;
use fakesim_episode::actuation::{Actuation, SimActuation};
use fakesim_feetech_arm::mapping::JointMapping;
use fakesim_feetech_arm::{FeetechArm, FeetechArmConfig};
use fakesim_safety::{RangeGuard, TableGuard};
use fakesim_twin::{ArmType, Dynamics, JointValues, Scene, Sim, TwinConfig, TwinHandle};
use feetech::bus::BusConfig;
use feetech_emu::{EmuConfig, VirtualSo101, serve_pty};
use std::sync::Arc;
use std::time::{Duration, Instant};
use uom::si::angle::radian;

const HOME: [f64; 6] = [0.0, -0.8, 0.4, 1.55, 0.0, 0.6];
/// Mirror readings let pass before timing.
const MIRROR_WARM_UP: usize = 100;
/// Mirror readings timed.
const MIRROR_READINGS: usize = 1000;
/// Servo moves timed until the twin shows them.
const MOVES: usize = 300;

fn percentile(samples: &mut [Duration], q: f64) -> f64 {
    samples.sort();
    samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3
}

/// The shadow's work per reading (a commanded arm, 6 joints): p50 over batches of 1000
/// readings of an arm tracking a moving goal; with `model`, the identified model's rollout.
fn shadow_per_reading(period: Duration, model: Option<ShadowModel>) -> Duration {
    let mut shadow = Shadow::new(ShadowConfig::default(), period, HOME).identified(model);
    let start = Instant::now();
    let mut batches = Vec::new();
    for batch in 0..200u32 {
        let began = Instant::now();
        for k in 0..1000u32 {
            let t = f64::from(batch * 1000 + k) * 1e-3;
            let goals = HOME.map(|q| q + 0.2 * t.sin());
            let input = ShadowInput {
                at: start + Duration::from_secs_f64(t),
                measured: goals.map(|q| q - 0.01),
                load_percent: [20.0; 6],
                goals: Some(goals),
            };
            std::hint::black_box(shadow.observe(std::hint::black_box(&input)));
        }
        batches.push(began.elapsed() / 1000);
    }
    batches.sort();
    batches[batches.len() / 2]
}

/// Where one servo move spent its time until a task waiting on the samples saw it.
struct MoveTrace {
    /// Move to that task seeing the sample.
    seen: Duration,
    /// Move to the reading being in the twin.
    in_twin: Duration,
    /// Move to the read being asked for (negative: asked before the move, answered after).
    to_read_ms: f64,
    /// The read, asked for to arrived.
    read: Duration,
    /// Arrived to in the twin.
    twin: Duration,
    /// In the twin to the waiting task seeing it.
    wake: Duration,
}

impl MoveTrace {
    fn new(moved: Instant, sample: &Sample, seen: Instant) -> Self {
        let signed_ms = |from: Instant, to: Instant| {
            (to.saturating_duration_since(from).as_secs_f64() - from.saturating_duration_since(to).as_secs_f64()) * 1e3
        };
        Self {
            seen: seen - moved,
            in_twin: sample.mirrored_at.saturating_duration_since(moved),
            to_read_ms: signed_ms(moved, sample.sent_at),
            read: sample.at - sample.sent_at,
            twin: sample.mirrored_at - sample.at,
            wake: seen.saturating_duration_since(sample.mirrored_at),
        }
    }
}

impl std::fmt::Display for MoveTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        write!(
            f,
            "{:.2} ms = move to read asked {:+.2} + read {:.2} + twin write {:.2} + to the waiting task {:.2}",
            ms(self.seen),
            self.to_read_ms,
            ms(self.read),
            ms(self.twin),
            ms(self.wake)
        )
    }
}

async fn timed_moves(actuation: &dyn Actuation, twin: &TwinHandle, n: usize) -> (Vec<Duration>, Vec<u32>) {
    let (mut times, mut ticks) = (Vec::new(), Vec::new());
    for i in 0..n {
        let dy = if i % 2 == 0 { 0.05 } else { -0.05 };
        let start = Instant::now();
        let report = actuation
            .run_move(twin, [0.0, dy, 0.0], None, 30, u64::MAX)
            .await
            .unwrap();
        times.push(start.elapsed());
        ticks.push(report.executed_steps);
    }
    (times, ticks)
}

#[tokio::main]
async fn main() {
    let bus = serve_pty(EmuConfig {
        wire_timing: true,
        ..VirtualSo101::config()
    })
    .await
    .unwrap();
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let (ranges, period) = twin
        .with_sim(|sim| (sim.joint_ranges(), sim.model_info().control_rate_hz()))
        .await
        .unwrap();
    let mapping = JointMapping::so101()
        .bind(&VirtualSo101::calibration(), &ranges)
        .unwrap();
    let range = RangeGuard::with_calibration(ranges, mapping.calibrated_ranges());
    let arm = FeetechArm::open(
        bus.path(),
        1_000_000,
        BusConfig::default(),
        mapping.clone(),
        FeetechArmConfig::new("pty"),
    )
    .unwrap();
    let arm: Arc<dyn Arm> = Arc::new(arm);
    let parts = BridgeParts {
        arm: Some(arm.clone()),
        twin: twin.clone(),
        range,
        table: TableGuard::default(),
        kinematics: Arc::new(ScratchTwinKinematics::load(&Scene::Tabletop).unwrap()),
        preview: None,
        config: BridgeConfig::new(Duration::from_secs_f64(1.0 / period)),
    };
    let (bridge, _events) = HardwareBridge::start(parts, Mode::Mirror).await.unwrap();

    // Mirror rate and per-reading latency (read the arm + write the twin), after a warm-up;
    // the servos' transaction counters must show one read per reading counted.
    let mut samples = bridge.samples();
    for _ in 0..MIRROR_WARM_UP {
        samples.changed().await.unwrap();
    }
    let transactions =
        |arm: &dyn Arm| -> Vec<u64> { arm.health().servos.iter().map(|s| s.comm.transactions).collect() };
    let (first, before) = (samples.borrow_and_update().seq, transactions(arm.as_ref()));
    let start = Instant::now();
    let mut latencies = Vec::new();
    while latencies.len() < MIRROR_READINGS {
        samples.changed().await.unwrap();
        let sample = *samples.borrow_and_update();
        latencies.push(sample.mirrored_at - sample.sent_at);
    }
    let elapsed = start.elapsed().as_secs_f64();
    let (seq, after) = (samples.borrow().seq, transactions(arm.as_ref()));
    let readings = seq - first;
    println!(
        "mirror loop (wire timing on, the bus's rate)  {:>8.1} readings/s  ({readings} readings in {elapsed:.2} s, {} observed)",
        readings as f64 / elapsed,
        latencies.len()
    );
    let failures: u64 = arm.health().servos.iter().map(|s| s.comm.failures).sum();
    for (servo, (b, a)) in before.iter().zip(&after).enumerate() {
        // The reading in flight when the counters were read may or may not be counted.
        assert!(
            (a - b).abs_diff(readings) <= 1,
            "servo {}: {} transactions for {readings} readings",
            servo + 1,
            a - b
        );
    }
    let step_p50_ms = percentile(&mut latencies, 0.5);
    println!(
        "  read arm + write twin                        p50 {:>6.2} ms   p99 {:>6.2} ms   (failed transactions: {failures})",
        step_p50_ms,
        percentile(&mut latencies, 0.99)
    );
    // At the step `fakesim-hil identify` writes in a profile.
    let identified = Sim::load(&Scene::builtin(ArmType::So101, false), 1)
        .and_then(|sim| {
            let step = fakesim_identify::replay::PHYSICS_STEP_S;
            let dynamics = Dynamics::read(sim.model(), ArmType::So101.spec())?;
            ShadowModel::new(ArmType::So101, &dynamics, Some(step))
        })
        .unwrap();
    for (what, model) in [("hand-set lag", None), ("identified model", Some(identified))] {
        let shadow = shadow_per_reading(Duration::from_secs_f64(1.0 / period), model);
        println!(
            "  shadow per reading ({what:>16})      p50 {:>6.2} µs   {:.3} % of the mirror step p50",
            shadow.as_secs_f64() * 1e6,
            shadow.as_secs_f64() * 1e3 / step_p50_ms * 100.0
        );
    }

    // Servo moved by hand -> twin shows it: as a task waiting on the samples sees it, and as
    // the sample's own timestamps tell (the reading in the twin), with where the slowest
    // moves spent their time.
    let mut moves = Vec::new();
    for i in 0..MOVES {
        let steps = if i % 2 == 0 { 2300 } else { 1800 };
        let expected = mapping.servo_to_twin(Joint::ElbowFlex, steps).get::<radian>();
        let moved = Instant::now();
        bus.servos().set_present_position(3, steps).unwrap();
        let sample = *samples
            .wait_for(|s| s.twin_rad.get(2).is_some_and(|q| (q - expected).abs() < 1e-9))
            .await
            .unwrap();
        moves.push(MoveTrace::new(moved, &sample, Instant::now()));
    }
    let mut seen: Vec<Duration> = moves.iter().map(|m| m.seen).collect();
    let mut in_twin: Vec<Duration> = moves.iter().map(|m| m.in_twin).collect();
    println!(
        "  servo moved -> twin shows it ({MOVES} moves)        p50 {:>6.2} ms   p99 {:>6.2} ms   (a waiting task sees it)",
        percentile(&mut seen, 0.5),
        percentile(&mut seen, 0.99)
    );
    println!(
        "  servo moved -> reading in the twin              p50 {:>6.2} ms   p99 {:>6.2} ms   (the sample's timestamps)",
        percentile(&mut in_twin, 0.5),
        percentile(&mut in_twin, 0.99)
    );
    moves.sort_by_key(|m| std::cmp::Reverse(m.seen));
    for m in moves.iter().take(MOVES.div_ceil(100)) {
        println!("    slowest 1 %: {m}");
    }

    // The same 5 cm moves in sim and in hil.
    twin.try_with_sim(|sim| sim.set_joint_positions(&JointValues::Ordered(HOME.to_vec()), true))
        .await
        .unwrap();
    let (mut sim_times, sim_ticks) = timed_moves(&SimActuation, &twin, 10).await;
    bridge
        .set_mode(Mode::Hil, SyncOption::MoveArmToTwin, Some(2.0))
        .await
        .unwrap();
    let hil = BridgeActuation::new(bridge.clone());
    let (mut hil_times, hil_ticks) = timed_moves(&hil, &twin, 10).await;
    println!(
        "5 cm move in sim (lock-step)                   p50 {:>8.2} ms   ticks {:?}",
        percentile(&mut sim_times, 0.5),
        sim_ticks
    );
    println!(
        "5 cm move in hil ({:.0} ms ticks, real time)     p50 {:>8.2} ms   ticks {:?}",
        1000.0 / period,
        percentile(&mut hil_times, 0.5),
        hil_ticks
    );
    bridge.set_mode(Mode::Mirror, SyncOption::None, None).await.unwrap();
}
