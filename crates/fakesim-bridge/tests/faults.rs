//! Injected faults on the virtual SO-101: they surface in the arm's health and lead the fault
//! policy to its documented decision. Time is paused, so bus timeouts elapse instantly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::virtual_arm;
use fakesim_arm::Joint;
use fakesim_arm::{Arm, ArmError};
use fakesim_feetech_arm::FeetechArmConfig;
use fakesim_safety::{FaultAction, FaultPolicy, SafetyEvent};
use feetech::control_table::TORQUE_ENABLE;
use feetech::protocol::status::ServoError;

const RETRIES: u32 = 2;
const LOST_AFTER: u32 = 2;

fn config() -> FeetechArmConfig {
    FeetechArmConfig {
        retries: RETRIES,
        lost_after: LOST_AFTER,
        ..FeetechArmConfig::new("virtual")
    }
}

#[tokio::test(start_paused = true)]
async fn corrupted_replies_are_retried_counted_and_lose_the_bus_when_every_retry_fails() {
    let v = virtual_arm(config());
    let mut policy = FaultPolicy::new();
    v.servos.update_faults(|f| f.corrupt_checksum = 1.0);

    let err = v.arm.read_state().await.unwrap_err();
    let ArmError::Unresponsive { failures } = &err else {
        panic!("unexpected {err}");
    };
    assert_eq!(failures.len(), 6);
    assert!(
        err.to_string()
            .contains("shoulder_pan (servo 1): corrupted reply from servo 1"),
        "{err}"
    );
    for servo in &v.arm.health().servos {
        assert_eq!(servo.comm.corrupt, u64::from(RETRIES + 1), "{}", servo.joint);
        assert_eq!(servo.comm.retries, u64::from(RETRIES));
        assert_eq!(servo.comm.failures, 1);
        assert!(servo.responding, "one failed transaction is not yet a loss");
    }
    assert_eq!(policy.evaluate(&v.arm.health()).action, FaultAction::Continue);

    v.arm.read_state().await.unwrap_err();
    let health = v.arm.health();
    assert!(health.servos.iter().all(|s| !s.responding));
    assert!(health.bus_lost());
    let decision = policy.evaluate(&health);
    assert_eq!(decision.action, FaultAction::TorqueOff);
    assert!(decision.latch);
    assert!(matches!(decision.events.first(), Some(SafetyEvent::BusLost { .. })));
    let lost = decision
        .events
        .iter()
        .filter(|e| matches!(e, SafetyEvent::ServoLost { .. }))
        .count();
    assert_eq!(lost, 6);

    // The line recovers: the next read succeeds and the streaks reset.
    v.servos.update_faults(|f| f.corrupt_checksum = 0.0);
    v.arm.read_state().await.unwrap();
    let health = v.arm.health();
    assert!(!health.bus_lost());
    assert!(
        health
            .servos
            .iter()
            .all(|s| s.responding && s.comm.consecutive_failures == 0)
    );
    assert_eq!(health.servos[0].comm.failures, 2);
}

#[tokio::test(start_paused = true)]
async fn occasional_corruption_is_absorbed_by_the_retries() {
    let v = virtual_arm(FeetechArmConfig { retries: 3, ..config() });
    v.servos.update_faults(|f| f.corrupt_checksum = 0.2);
    let mut ok = 0;
    for _ in 0..40 {
        ok += usize::from(v.arm.read_state().await.is_ok());
    }
    assert!(ok >= 38, "only {ok} of 40 reads succeeded");
    let health = v.arm.health();
    let corrupt: u64 = health.servos.iter().map(|s| s.comm.corrupt).sum();
    let retries: u64 = health.servos.iter().map(|s| s.comm.retries).sum();
    assert!(corrupt > 0 && retries > 0, "corrupt {corrupt}, retries {retries}");
    assert!(health.servos.iter().all(|s| s.responding));
    assert_eq!(FaultPolicy::new().evaluate(&health).action, FaultAction::Continue);
}

#[tokio::test(start_paused = true)]
async fn a_silent_servo_is_named_counted_as_timeouts_and_latches_the_policy() {
    let v = virtual_arm(config());
    let mut policy = FaultPolicy::new();
    v.arm.set_torque(true).await.unwrap();
    v.servos.update_faults(|f| {
        f.silent.insert(3);
    });
    for _ in 0..LOST_AFTER {
        let err = v.arm.read_state().await.unwrap_err();
        let ArmError::Unresponsive { failures } = &err else {
            panic!("unexpected {err}");
        };
        assert_eq!(failures.len(), 1);
        assert_eq!((failures[0].joint, failures[0].id), (Joint::ElbowFlex, 3));
        assert_eq!(
            err.to_string(),
            "no valid reply after retries from elbow_flex (servo 3): no reply from servo 3"
        );
    }
    let health = v.arm.health();
    let elbow = &health.servos[2];
    assert_eq!(elbow.comm.timeouts, u64::from(LOST_AFTER * (RETRIES + 1)));
    assert!(!elbow.responding);
    assert!(!health.bus_lost(), "the other servos still answer");
    assert!(
        health
            .servos
            .iter()
            .filter(|s| s.joint != Joint::ElbowFlex)
            .all(|s| s.responding && s.comm.timeouts == 0)
    );
    // The others were still read.
    assert!(health.servos[0].last_reading.is_some());

    let decision = policy.evaluate(&health);
    assert_eq!(decision.action, FaultAction::TorqueOff);
    assert!(decision.latch);
    assert!(matches!(
        decision.events.as_slice(),
        [SafetyEvent::ServoLost {
            joint: Joint::ElbowFlex,
            id: 3,
            consecutive_failures: 2,
            ..
        }]
    ));

    // The decision is carried out: torque off reaches every servo that still listens, and
    // the silent one is reported (it kept its torque: it hears nothing).
    let err = v.arm.set_torque(false).await.unwrap_err();
    assert!(err.to_string().contains("elbow_flex (servo 3)"), "{err}");
    for id in [1, 2, 4, 5, 6] {
        assert_eq!(v.servos.register(id, &TORQUE_ENABLE).unwrap(), 0, "servo {id}");
    }
    assert_eq!(v.servos.register(3, &TORQUE_ENABLE).unwrap(), 1);
    assert_eq!(
        v.arm.health().torque,
        fakesim_arm::Torque::Unknown,
        "torque is not known to be off everywhere"
    );
}

#[tokio::test(start_paused = true)]
async fn an_overload_bit_turns_torque_off_without_latching() {
    let v = virtual_arm(config());
    let mut policy = FaultPolicy::new();
    v.arm.set_torque(true).await.unwrap();
    v.servos.update_faults(|f| {
        f.forced_errors.insert(2, ServoError::OVERLOAD);
    });
    let state = v.arm.read_state().await.unwrap();
    assert!(
        state
            .joint(Joint::ShoulderLift)
            .servo
            .unwrap()
            .error_flags
            .contains(ServoError::OVERLOAD)
    );
    let health = v.arm.health();
    assert_eq!(health.servos[1].error_flags, ServoError::OVERLOAD);
    let decision = policy.evaluate(&health);
    assert_eq!(decision.action, FaultAction::TorqueOff);
    assert!(!decision.latch);
    assert_eq!(
        decision.events,
        [SafetyEvent::ServoFault {
            joint: Joint::ShoulderLift,
            id: 2,
            flags: vec!["OVERLOAD".into()],
            action: FaultAction::TorqueOff
        }]
    );
    v.arm.set_torque(false).await.unwrap();
    for id in 1..=6 {
        assert_eq!(v.servos.register(id, &TORQUE_ENABLE).unwrap(), 0);
    }
    // Forced voltage instead: hold.
    v.servos.update_faults(|f| {
        f.forced_errors.insert(2, ServoError::VOLTAGE);
    });
    v.arm.read_state().await.unwrap();
    assert_eq!(policy.evaluate(&v.arm.health()).action, FaultAction::Hold);
}

#[tokio::test(start_paused = true)]
async fn an_unplugged_port_is_lost_for_good_and_latches_the_policy() {
    let v = virtual_arm(config());
    let mut policy = FaultPolicy::new();
    v.arm.read_state().await.unwrap();
    v.servos.unplug();
    v.running.finished().await.unwrap();

    let err = v.arm.read_state().await.unwrap_err();
    assert!(matches!(err, ArmError::PortGone { .. }), "{err}");
    let health = v.arm.health();
    assert!(!health.port_open());
    assert!(health.bus_lost());
    let decision = policy.evaluate(&health);
    assert_eq!(decision.action, FaultAction::TorqueOff);
    assert!(decision.latch);
    assert!(matches!(decision.events.as_slice(), [SafetyEvent::BusLost { .. }]));
    // The torque-off attempt and any motion fail the same way, at once.
    assert!(matches!(v.arm.set_torque(false).await, Err(ArmError::PortGone { .. })));
    assert!(matches!(v.arm.command([0.0; 6]).await, Err(ArmError::PortGone { .. })));
    // Last readings stay available for the status.
    assert!(v.arm.health().servos.iter().all(|s| s.last_reading.is_some()));
}
