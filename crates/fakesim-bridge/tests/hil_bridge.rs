//! The bridge's run-time wiring on a virtual arm (an in-memory bus, real time): the watchdog holds the arm
//! after a silence and resumes on the next command; mirror mode writes readings into the twin and
//! turns torque off on a servo fault.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{TWIN_RANGES, mapping, virtual_arm};
use fakesim_arm::Arm;
use fakesim_arm::Joint;
use fakesim_bridge::hil::{BridgeConfig, BridgeError, BridgeParts, HardwareBridge, Mode, SyncOption};
use fakesim_bridge::twin::ScratchTwinKinematics;
use fakesim_feetech_arm::FeetechArmConfig;
use fakesim_safety::{FaultAction, RangeGuard, SafetyEvent, TableGuard};
use fakesim_twin::{Scene, TwinConfig, TwinHandle};
use feetech::control_table::TORQUE_ENABLE;
use feetech::protocol::status::ServoError;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;

/// A short watchdog so the test waits a fraction of a second.
const WATCHDOG: Duration = Duration::from_millis(200);

async fn bridge(arm: Arc<dyn Arm>) -> (HardwareBridge, UnboundedReceiver<SafetyEvent>, TwinHandle) {
    let twin = TwinHandle::spawn(TwinConfig {
        scene: Scene::EmptyTable,
        ..TwinConfig::default()
    })
    .unwrap();
    let parts = BridgeParts {
        arm: Some(arm),
        twin: twin.clone(),
        range: RangeGuard::with_calibration(TWIN_RANGES, mapping().calibrated_ranges()),
        table: TableGuard::default(),
        kinematics: Arc::new(ScratchTwinKinematics::load(&Scene::EmptyTable).unwrap()),
        preview: None,
        config: BridgeConfig {
            watchdog_timeout: WATCHDOG,
            ..BridgeConfig::new(Duration::from_millis(50))
        },
    };
    let (bridge, events) = HardwareBridge::start(parts, Mode::Mirror).await.unwrap();
    (bridge, events, twin)
}

/// The next event `wanted` accepts, within 10 s.
async fn next_matching(events: &mut UnboundedReceiver<SafetyEvent>, wanted: fn(&SafetyEvent) -> bool) -> SafetyEvent {
    let search = async {
        loop {
            let event = events.recv().await.expect("the bridge stopped");
            if wanted(&event) {
                return event;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), search)
        .await
        .expect("no such event within 30 s")
}

#[tokio::test]
async fn the_watchdog_holds_after_a_silence_and_resumes_on_the_next_command() {
    let virt = virtual_arm(FeetechArmConfig::new("virtual"));
    let arm: Arc<dyn Arm> = Arc::new(virt.arm.clone());
    let (bridge, mut events, _twin) = bridge(arm.clone()).await;
    bridge
        .set_mode(Mode::Hil, SyncOption::MoveTwinToArm, None)
        .await
        .unwrap();
    let measured = arm.read_state().await.unwrap().positions_rad();
    let mut goals = measured;
    goals[0] += 0.05;
    bridge.command(goals, measured).await.unwrap();
    let commanded = tokio::time::Instant::now();
    let hold = next_matching(&mut events, |e| matches!(e, SafetyEvent::WatchdogHold { .. })).await;
    assert!(
        commanded.elapsed() >= WATCHDOG,
        "held after {:?}: {hold:?}",
        commanded.elapsed()
    );
    assert_eq!(
        bridge
            .status()
            .recent_events
            .iter()
            .filter(|e| matches!(e.event, SafetyEvent::WatchdogHold { .. }))
            .count(),
        1
    );
    bridge.command(measured, measured).await.unwrap();
    next_matching(&mut events, |e| matches!(e, SafetyEvent::WatchdogResumed)).await;
}

#[tokio::test]
async fn mirror_mode_writes_readings_into_the_twin_and_hil_needs_agreement() {
    let virt = virtual_arm(FeetechArmConfig::new("virtual"));
    let arm: Arc<dyn Arm> = Arc::new(virt.arm.clone());
    let (bridge, _events, twin) = bridge(arm.clone()).await;
    virt.servos.set_present_position(2, 2600).unwrap();
    let expected = mapping().servo_to_twin(fakesim_arm::Joint::ShoulderLift, 2600);
    let expected = expected.get::<uom::si::angle::radian>();
    let mut samples = bridge.samples();
    samples
        .wait_for(|s| s.real_rad.is_some_and(|r| (r[1] - expected).abs() < 1e-9))
        .await
        .unwrap();
    let sample = *samples.borrow();
    assert!((sample.twin_rad[1] - expected).abs() < 1e-9, "{sample:?}");
    let twin_q = twin.with_sim(|sim| sim.arm_qpos()).await.unwrap();
    assert!((twin_q[1] - expected).abs() < 1e-9);

    bridge.set_mode(Mode::Sim, SyncOption::None, None).await.unwrap();
    twin.try_with_sim(|sim| {
        sim.set_joint_positions(
            &fakesim_twin::JointValues::Ordered(vec![0.5, 0.0, 0.0, 0.0, 0.0, 0.0]),
            true,
        )
    })
    .await
    .unwrap();
    let refused = bridge.set_mode(Mode::Hil, SyncOption::None, None).await.unwrap_err();
    assert!(matches!(refused, BridgeError::Disagree { .. }), "{refused}");
    assert_eq!(bridge.mode(), Mode::Sim, "a refused switch changes nothing");
}

#[tokio::test]
async fn in_mirror_an_overload_seen_by_a_positions_only_reading_turns_torque_off() {
    // One state block (the torque-on read), positions only from then on.
    let virt = virtual_arm(FeetechArmConfig {
        state_every: u32::MAX,
        ..FeetechArmConfig::new("virtual")
    });
    let arm: Arc<dyn Arm> = Arc::new(virt.arm.clone());
    arm.set_torque(true).await.unwrap();
    let (bridge, mut events, _twin) = bridge(arm.clone()).await;
    virt.servos.update_faults(|f| {
        f.forced_errors.insert(2, ServoError::OVERLOAD);
    });
    let fault = next_matching(&mut events, |e| matches!(e, SafetyEvent::ServoFault { .. })).await;
    assert!(
        matches!(
            fault,
            SafetyEvent::ServoFault {
                joint: Joint::ShoulderLift,
                id: 2,
                action: FaultAction::TorqueOff,
                ..
            }
        ),
        "{fault:?}"
    );
    // The reaction is done before the sample of the reading that raised it is published.
    let mut samples = bridge.samples();
    samples.borrow_and_update();
    samples.changed().await.unwrap();
    assert!((1..=6).all(|id| virt.servos.register(id, &TORQUE_ENABLE).unwrap() == 0));
    assert_eq!(arm.health().torque, fakesim_arm::Torque::Off);
}
