//! The guard holds by construction, checked on random command sequences against the virtual
//! SO-101 bus: whatever the layers refused before, every goal the bus received lies in the
//! effective range and is either a goal the preview ran on or a hold where the servo stood.
//! Time is paused; the servos move in the bus's simulated time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{TWIN_RANGES, VirtualArm, mapping, virtual_arm};
use fakesim_arm::Joint;
use fakesim_arm::{Arm, BoxFuture};
use fakesim_feetech_arm::FeetechArmConfig;
use fakesim_safety::{
    CommandPreview, DeltaCap, EstopLatch, Layers, Pace, PipelineTiming, RangeGuard, SafetyError, SafetyPipeline,
    TableGuard,
};
use feetech::control_table::GOAL_POSITION;
use feetech::protocol::status::ServoError;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PERIOD: Duration = Duration::from_millis(20);
const WATCHDOG: Duration = Duration::from_millis(200);
/// The preview refuses goals that turn the pan past this (rad).
const PREVIEW_PAN_LIMIT: f64 = 0.6;

/// A preview that refuses by a rule and remembers, in servo steps, every goal it passed.
struct RecordingPreview {
    passed: Mutex<BTreeSet<(u8, i32)>>,
}

impl CommandPreview for RecordingPreview {
    fn check(&self, goals: [f64; 6], _measured: [f64; 6]) -> BoxFuture<'_, Result<(), SafetyError>> {
        Box::pin(async move {
            if goals[0] > PREVIEW_PAN_LIMIT {
                return Err(SafetyError::PreviewRefused {
                    violations: "base_contact: upper_arm / base".into(),
                });
            }
            let mapping = mapping();
            let mut passed = self.passed.lock().unwrap();
            for joint in Joint::ALL {
                if let Some(steps) = mapping.rad_to_servo(joint, goals[joint.index()]) {
                    passed.insert((mapping.servo_id(joint), steps));
                }
            }
            Ok(())
        })
    }
}

/// One step of a sequence.
#[derive(Debug, Clone)]
enum Op {
    /// Targets near the arm's pose (offsets in rad).
    Near([f64; 6]),
    /// Targets anywhere in the model range (fractions of it).
    Anywhere([f64; 6]),
    /// A joint's target past the end of its model range.
    OutOfRange(usize),
    /// The shoulder lifted so far the TCP goes into the table.
    IntoTable,
    /// The pan turned into what the preview refuses.
    PreviewRefused,
    /// Latch the emergency stop, or reset it.
    Estop(bool),
    /// Silence for this many milliseconds, then the watchdog's check.
    Gap(u64),
    /// A servo reports a fault (voltage: hold; overload: torque off), then the reaction runs.
    Fault(usize, bool),
    /// Every fault clears.
    ClearFaults,
    /// Torque on again (after a torque-off).
    TorqueOn,
}

fn op() -> impl Strategy<Value = Op> {
    let offsets = prop::array::uniform6(-0.4f64..0.4);
    let fractions = prop::array::uniform6(-1.0f64..1.0);
    prop_oneof![
        4 => offsets.prop_map(Op::Near),
        2 => fractions.prop_map(Op::Anywhere),
        1 => (0usize..6).prop_map(Op::OutOfRange),
        1 => Just(Op::IntoTable),
        2 => Just(Op::PreviewRefused),
        1 => any::<bool>().prop_map(Op::Estop),
        1 => (1u64..400).prop_map(Op::Gap),
        1 => ((0usize..6), any::<bool>()).prop_map(|(joint, overload)| Op::Fault(joint, overload)),
        1 => Just(Op::ClearFaults),
        1 => Just(Op::TorqueOn),
    ]
}

/// The TCP goes below the table when the shoulder lifts past 1.2 rad.
fn layers(preview: Arc<RecordingPreview>) -> Layers {
    Layers {
        estop: EstopLatch::new(),
        range: RangeGuard::with_calibration(TWIN_RANGES, mapping().calibrated_ranges()),
        table: TableGuard::default(),
        kinematics: Arc::new(|joints: &[f64; 6]| {
            let z = if joints[1] > 1.2 { 0.7 } else { 1.0 };
            Ok([0.2, 0.0, z])
        }),
        delta: DeltaCap::uniform(0.1).unwrap(),
        preview: Some(preview),
    }
}

fn clock() -> std::time::Instant {
    tokio::time::Instant::now().into_std()
}

/// Lets `by` pass on both clocks: the pipeline's (tokio's) and the servos'.
async fn pass(v: &VirtualArm, by: Duration) {
    tokio::time::advance(by).await;
    v.clock.advance(by);
}

/// Applies `op`; returns whether it was a command the pipeline accepted.
async fn apply(v: &VirtualArm, guard: &SafetyPipeline, op: &Op) -> bool {
    let Ok(state) = v.arm.read_state().await else {
        return false;
    };
    let measured = state.positions_rad();
    let targets = match op {
        Op::Near(offsets) => Some(std::array::from_fn(|i| measured[i] + offsets[i])),
        Op::Anywhere(fractions) => Some(std::array::from_fn(|i| {
            let r = TWIN_RANGES[i];
            (r.lo + r.hi) / 2.0 + fractions[i] * (r.hi - r.lo) / 2.0
        })),
        Op::OutOfRange(joint) => {
            let mut targets = measured;
            targets[*joint] = TWIN_RANGES[*joint].hi + 0.2;
            Some(targets)
        }
        Op::IntoTable => Some([measured[0], 1.5, measured[2], measured[3], measured[4], measured[5]]),
        Op::PreviewRefused => Some([
            PREVIEW_PAN_LIMIT + 0.3,
            measured[1],
            measured[2],
            measured[3],
            measured[4],
            measured[5],
        ]),
        Op::Estop(true) => {
            guard.emergency_stop("property test").await;
            None
        }
        Op::Estop(false) => {
            guard.layers().estop.reset();
            None
        }
        Op::Gap(ms) => {
            pass(v, Duration::from_millis(*ms)).await;
            // As the mirror loop does: the watchdog holds at a fresh reading.
            if let Ok(now) = v.arm.read_state().await {
                guard.check_watchdog(now.positions_rad()).await;
            }
            None
        }
        Op::Fault(joint, overload) => {
            let flags = if *overload {
                ServoError::OVERLOAD
            } else {
                ServoError::VOLTAGE
            };
            v.servos.update_faults(|f| {
                f.forced_errors.insert(*joint as u8 + 1, flags);
            });
            let _ = v.arm.read_state().await;
            guard.react_to_faults(|_| {}).await;
            None
        }
        Op::ClearFaults => {
            v.servos.update_faults(|f| f.forced_errors.clear());
            let _ = v.arm.read_state().await;
            guard.react_to_faults(|_| {}).await;
            None
        }
        Op::TorqueOn => {
            let _ = guard.switch_torque_on().await;
            None
        }
    };
    let Some(targets) = targets else {
        return false;
    };
    let accepted = guard.command(targets, Some(measured), Pace::Ramped).await.is_ok();
    pass(v, PERIOD).await;
    accepted
}

/// Every goal written so far: in the effective range, and previewed or a hold where the servo stood.
fn check_write_log(v: &VirtualArm, preview: &RecordingPreview, guard: &SafetyPipeline, ops: &[Op]) {
    let mapping = mapping();
    let passed = preview.passed.lock().unwrap();
    // Half a step of rounding either way.
    let slack = std::f64::consts::TAU / 4096.0;
    for record in v.servos.write_log() {
        let Some(steps) = record.value(&GOAL_POSITION) else {
            continue;
        };
        let joint = mapping.joint_of_servo(record.id).unwrap();
        let rad = mapping.servo_to_rad(joint, steps);
        let limits = guard.layers().range.limits(joint);
        assert!(
            rad >= limits.lo - slack && rad <= limits.hi + slack,
            "{joint} goal {rad} rad outside the effective range {limits:?} after {ops:?}"
        );
        let held = steps == record.present_before;
        assert!(
            held || passed.contains(&(record.id, steps)),
            "{joint} goal {steps} steps (present {}) was neither previewed nor a hold, after {ops:?}",
            record.present_before
        );
    }
}

fn goal_writes(v: &VirtualArm) -> usize {
    v.servos
        .write_log()
        .iter()
        .filter(|r| r.value(&GOAL_POSITION).is_some())
        .count()
}

fn run_sequence(ops: &[Op]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let v = virtual_arm(FeetechArmConfig::new("virtual"));
        let preview = Arc::new(RecordingPreview {
            passed: Mutex::new(BTreeSet::new()),
        });
        let timing = PipelineTiming {
            ramp_speed_rad_s: 0.5,
            period: PERIOD,
            watchdog_timeout: WATCHDOG,
        };
        let arm: Arc<dyn Arm> = Arc::new(v.arm.clone());
        let guard = SafetyPipeline::new(Some(arm), layers(preview.clone()), timing, clock);
        guard.switch_torque_on().await.unwrap();
        for (done, op) in ops.iter().enumerate() {
            let written_before = goal_writes(&v);
            if apply(&v, &guard, op).await {
                assert!(
                    goal_writes(&v) > written_before,
                    "an accepted command wrote no goal: {ops:?}"
                );
            }
            check_write_log(&v, &preview, &guard, &ops[..=done]);
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn every_goal_on_the_bus_was_previewed_and_lies_in_the_effective_range(ops in prop::collection::vec(op(), 1..24)) {
        run_sequence(&ops);
    }
}
