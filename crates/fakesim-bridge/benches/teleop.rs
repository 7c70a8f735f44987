//! Teleop cycle rate over two virtual SO-101 buses on pseudo-terminals at 1 Mbaud with wire
//! timing on (replies are delayed by their time on the wire plus the servo's return delay).
//! The loop is unthrottled: `step_once` back to back, the leader moved by scripted hand
//! motion. A cycle is a SYNC_READ of the follower, a SYNC_READ of the leader, the safety
//! layers (the table guard runs forward kinematics on a scratch twin) and a SYNC_WRITE of the
//! follower's goals; with the twin, also `set_joint_positions(hold)` on it.
//!
//! Run: `cargo bench -p fakesim-bridge --bench teleop`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use fakesim_arm::Arm;
use fakesim_arm::Joint;
use fakesim_bridge::teleop::{CycleOutcome, DEFAULT_MAX_STEP_RAD, Teleop, TeleopArms, TeleopConfig};
use fakesim_bridge::twin::ScratchTwinKinematics;
use fakesim_feetech_arm::mapping::{CalibratedMapping, JointMapping};
use fakesim_feetech_arm::{FeetechArm, FeetechArmConfig};
use fakesim_safety::{DeltaCap, EstopLatch, Layers, RangeGuard, TableGuard};
use fakesim_twin::values::Bounds;
use fakesim_twin::{Scene, TwinConfig, TwinHandle};
use feetech::bus::BusConfig;
use feetech::control_table::DEFAULT_BAUD_RATE;
use feetech_emu::{EmuConfig, PtyBus, VirtualSo101, serve_pty};

const CYCLES: usize = 2000;
const WARM_UP: usize = 100;

#[tokio::main]
async fn main() {
    for with_twin in [false, true] {
        let leader_bus = serve_pty(wire_timed()).await.unwrap();
        let follower_bus = serve_pty(wire_timed()).await.unwrap();
        let (mapping, ranges) = mapping();
        let leader = open(&leader_bus, &mapping);
        let follower = open(&follower_bus, &mapping);
        let twin = with_twin.then(|| {
            TwinHandle::spawn(TwinConfig {
                scene: Scene::EmptyTable,
                ..TwinConfig::default()
            })
            .unwrap()
        });
        let arms = TeleopArms {
            leader: Arc::new(leader),
            follower: Some(Arc::new(follower) as Arc<dyn Arm>),
            twin,
        };
        let safety = Layers {
            range: RangeGuard::with_calibration(ranges, mapping.calibrated_ranges()),
            table: TableGuard::default(),
            kinematics: Arc::new(ScratchTwinKinematics::load(&Scene::EmptyTable).unwrap()),
            delta: DeltaCap::uniform(DEFAULT_MAX_STEP_RAD).unwrap(),
            preview: None,
            estop: EstopLatch::new(),
        };
        let mut teleop = Teleop::start(arms, safety, TeleopConfig::default()).await.unwrap();

        let mut cycles = Vec::with_capacity(CYCLES);
        let mut measured_from = Instant::now();
        for cycle in 0..WARM_UP + CYCLES {
            if cycle == WARM_UP {
                measured_from = Instant::now();
            }
            move_leader(&leader_bus, cycle);
            let begun = Instant::now();
            let outcome = teleop.step_once().await.outcome;
            let took = begun.elapsed();
            assert!(matches!(outcome, CycleOutcome::Commanded { .. }), "{outcome:?}");
            if cycle >= WARM_UP {
                cycles.push(took);
            }
        }
        let total = measured_from.elapsed();
        teleop.stop().await.unwrap();
        let label = if with_twin {
            "follower + twin"
        } else {
            "follower only  "
        };
        report(label, total, &mut cycles);
        leader_bus.shutdown().await.unwrap();
        follower_bus.shutdown().await.unwrap();
    }
}

fn wire_timed() -> EmuConfig {
    EmuConfig {
        wire_timing: true,
        ..VirtualSo101::config()
    }
}

/// The virtual arm's calibration bound to the twin's ranges (both arms use it).
fn mapping() -> (CalibratedMapping, [Bounds; 6]) {
    let ranges = fakesim_twin::Sim::load(&Scene::EmptyTable, 1).unwrap().joint_ranges();
    let mapping = JointMapping::so101()
        .bind(&VirtualSo101::calibration(), &ranges)
        .unwrap();
    (mapping, ranges)
}

fn open(bus: &PtyBus, mapping: &CalibratedMapping) -> FeetechArm {
    let config = FeetechArmConfig::new(bus.path().display().to_string());
    FeetechArm::open(
        bus.path(),
        DEFAULT_BAUD_RATE,
        BusConfig::default(),
        mapping.clone(),
        config,
    )
    .unwrap()
}

/// Hand motion: the shoulder pan and the elbow sweep slowly about the middle.
fn move_leader(bus: &PtyBus, cycle: usize) {
    let phase = (cycle % 400) as f64 / 400.0 * std::f64::consts::TAU;
    let offset = (300.0 * phase.sin()).round() as i32;
    for (joint, steps) in [(Joint::ShoulderPan, 2047 + offset), (Joint::ElbowFlex, 2047 - offset)] {
        bus.servos()
            .set_present_position(joint.default_servo_id(), steps)
            .unwrap();
    }
}

fn report(label: &str, total: Duration, samples: &mut [Duration]) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q) as usize];
    println!(
        "{label}: {:.0} cycles/s unthrottled over {} cycles; cycle p50 {:?}  p99 {:?}  max {:?}",
        samples.len() as f64 / total.as_secs_f64(),
        samples.len(),
        at(0.5),
        at(0.99),
        at(1.0)
    );
}
