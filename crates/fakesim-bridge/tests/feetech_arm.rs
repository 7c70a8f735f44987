//! FeetechArm against the virtual SO-101 over an in-memory pipe, in simulated time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{TWIN_RANGES, virtual_arm, virtual_arm_with, virtual_calibration};
use fakesim_arm::Joint;
use fakesim_arm::{Arm, ArmError};
use fakesim_feetech_arm::FeetechArmConfig;
use fakesim_feetech_arm::mapping::{JointMapping, SO101_GRIPPER_RANGE};
use feetech::calibration::Calibration;
use feetech::control_table::{GOAL_POSITION, TORQUE_ENABLE};
use feetech::protocol::status::ServoError;
use uom::si::angle::radian;
use uom::si::f64::Angle;

/// One encoder step in the twin's radians, for the coarsest joint (the gripper's 1252-step
/// range spans 1.92 rad: 0.0015 rad a step; degrees joints: 0.0015 rad a step).
const ONE_STEP_RAD: f64 = 0.0016;

fn config() -> FeetechArmConfig {
    FeetechArmConfig::new("virtual")
}

/// The twin angle a calibrated reading should give, computed from the calibration file alone.
fn expected_rad(calibration: &Calibration, joint: Joint, steps: i32) -> f64 {
    let motor = calibration.motors[joint.label()];
    let (min, max) = (f64::from(motor.range_min), f64::from(motor.range_max));
    if joint == Joint::Gripper {
        let fraction = (f64::from(steps) - min) / (max - min);
        SO101_GRIPPER_RANGE.lo + fraction * (SO101_GRIPPER_RANGE.hi - SO101_GRIPPER_RANGE.lo)
    } else {
        ((f64::from(steps) - (min + max) / 2.0) * 360.0 / 4095.0).to_radians()
    }
}

#[tokio::test]
async fn reads_the_six_joints_in_twin_radians_consistently_with_a_calibration_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("so101_follower.json");
    virtual_calibration().save(&path).unwrap();
    let calibration = Calibration::load(&path).unwrap();
    let mapping = JointMapping::so101().bind(&calibration, &TWIN_RANGES).unwrap();
    let v = virtual_arm_with(config(), mapping);

    // Scripted hand motion: each joint somewhere else in its range.
    let placed = [900, 3100, 1500, 2600, 300, 2900];
    for (joint, steps) in Joint::ALL.iter().zip(placed) {
        v.servos.set_present_position(joint.default_servo_id(), steps).unwrap();
    }
    let state = v.arm.read_state().await.unwrap();
    for (joint, steps) in Joint::ALL.iter().zip(placed) {
        let reading = state.joint(*joint);
        let servo = reading.servo.unwrap();
        assert_eq!(servo.id, joint.default_servo_id());
        assert_eq!(servo.steps, steps, "{joint}");
        let expected = expected_rad(&calibration, *joint, steps);
        assert!(
            (reading.position_rad - expected).abs() < 1e-12,
            "{joint}: {} vs {expected}",
            reading.position_rad
        );
        assert!(
            reading.position_rad >= TWIN_RANGES[joint.index()].lo
                && reading.position_rad <= TWIN_RANGES[joint.index()].hi,
            "{joint} inside the twin's range"
        );
        assert!((servo.voltage_v - 12.0).abs() < 1e-9);
        assert!(servo.error_flags.is_empty());
        assert!(!servo.moving);
    }
    let gripper = state.joint(Joint::Gripper).servo.unwrap();
    assert!((gripper.normalized - (2900.0 - 1933.0) / (3185.0 - 1933.0) * 100.0).abs() < 1e-9);
    assert_eq!(state.positions_rad()[2], state.joint(Joint::ElbowFlex).position_rad);

    let health = v.arm.health();
    assert!(health.port_open() && !health.bus_lost());
    for servo in &health.servos {
        assert_eq!(servo.comm.transactions, 1);
        assert_eq!(servo.comm.retries + servo.comm.timeouts + servo.comm.corrupt, 0);
        assert_eq!(
            servo.last_reading.unwrap().servo.unwrap().steps,
            placed[servo.joint.index()]
        );
    }
}

#[tokio::test]
async fn commands_drive_the_virtual_servos_to_the_goals() {
    let v = virtual_arm(config());
    v.arm.set_torque(true).await.unwrap();
    assert_eq!(v.arm.health().torque, fakesim_arm::Torque::On);
    let goals = [0.5, -0.8, 1.2, -0.4, 2.0, 1.0];
    v.arm.command(goals).await.unwrap();
    let mapping = common::mapping();
    for joint in Joint::ALL {
        let goal = mapping
            .twin_to_servo(joint, Angle::new::<radian>(goals[joint.index()]))
            .unwrap();
        assert_eq!(
            v.servos.register(joint.default_servo_id(), &GOAL_POSITION).unwrap(),
            goal
        );
        assert_eq!(v.arm.health().servos[joint.index()].goal_steps, Some(goal));
    }
    let before = v.arm.read_state().await.unwrap();
    assert!(
        (before.positions_rad()[0]).abs() < ONE_STEP_RAD,
        "nothing moves before time passes"
    );
    v.clock.advance(Duration::from_secs(3));
    let after = v.arm.read_state().await.unwrap();
    for joint in Joint::ALL {
        let got = after.joint(joint).position_rad;
        assert!((got - goals[joint.index()]).abs() <= ONE_STEP_RAD, "{joint}: {got}");
        assert!(!after.joint(joint).servo.unwrap().moving, "{joint} arrived");
    }
}

#[tokio::test]
async fn torque_on_first_makes_every_goal_the_present_position() {
    let v = virtual_arm(config());
    // A goal written while torque is off is stored by the servo but not driven.
    v.arm.command([1.0; 6]).await.unwrap();
    let stale = v.arm.health().servos[0].goal_steps.unwrap();
    v.servos.set_present_position(1, 2300).unwrap();
    v.arm.set_torque(true).await.unwrap();
    assert_eq!(v.servos.register(1, &TORQUE_ENABLE).unwrap(), 1);
    let goals: Vec<Option<i32>> = v.arm.health().servos.iter().map(|s| s.goal_steps).collect();
    assert_ne!(goals[0], Some(stale));
    assert_eq!(
        goals,
        [Some(2300), Some(2047), Some(2047), Some(2047), Some(2047), Some(2047)]
    );
    assert_eq!(v.servos.register(1, &GOAL_POSITION).unwrap(), 2300);
    v.clock.advance(Duration::from_secs(2));
    let state = v.arm.read_state().await.unwrap();
    assert_eq!(state.joint(Joint::ShoulderPan).servo.unwrap().steps, 2300);
}

#[tokio::test]
async fn non_finite_goals_are_refused_and_nothing_is_written() {
    let v = virtual_arm(config());
    let err = v.arm.command([0.0, 0.0, f64::NAN, 0.0, 0.0, 0.0]).await.unwrap_err();
    assert!(
        matches!(
            err,
            ArmError::NonFiniteGoal {
                joint: Joint::ElbowFlex,
                ..
            }
        ),
        "{err}"
    );
    for id in 1..=6 {
        assert_eq!(
            v.servos.register(id, &GOAL_POSITION).unwrap(),
            v.servos.present_position(id).unwrap()
        );
    }
}

#[tokio::test]
async fn closing_switches_torque_off_and_ends_the_port_task() {
    let v = virtual_arm(config());
    v.arm.set_torque(true).await.unwrap();
    for id in 1..=6 {
        assert_eq!(v.servos.register(id, &TORQUE_ENABLE).unwrap(), 1);
    }
    v.arm.close().await.unwrap();
    for id in 1..=6 {
        assert_eq!(v.servos.register(id, &TORQUE_ENABLE).unwrap(), 0, "servo {id}");
    }
    assert_eq!(v.arm.health().torque, fakesim_arm::Torque::Off);
    assert!(matches!(v.arm.read_state().await, Err(ArmError::Closed)));
}

#[tokio::test]
async fn reading_flags_reach_the_state_and_the_health() {
    let v = virtual_arm(config());
    v.servos.update_faults(|f| {
        f.forced_errors.insert(4, ServoError::VOLTAGE);
    });
    let state = v.arm.read_state().await.unwrap();
    assert_eq!(
        state.joint(Joint::WristFlex).servo.unwrap().error_flags,
        ServoError::VOLTAGE
    );
    assert!(state.joint(Joint::WristRoll).servo.unwrap().error_flags.is_empty());
    assert_eq!(v.arm.health().servos[3].error_flags, ServoError::VOLTAGE);
}

#[tokio::test]
async fn dropping_the_last_handle_switches_torque_off() {
    let v = virtual_arm(config());
    let clone = v.arm.clone();
    clone.set_torque(true).await.unwrap();
    drop(clone);
    assert_eq!(
        v.servos.register(1, &TORQUE_ENABLE).unwrap(),
        1,
        "one handle is still alive"
    );
    drop(v.arm);
    // The port task finishes on its own; give it a bounded number of turns.
    let all_off = || (1..=6).all(|id| v.servos.register(id, &TORQUE_ENABLE).unwrap() == 0);
    for _ in 0..10_000 {
        if all_off() {
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(all_off());
}

#[tokio::test]
async fn between_state_blocks_positions_are_read_and_the_rest_carried_over() {
    const EVERY: u32 = 4;
    let v = virtual_arm(FeetechArmConfig {
        state_every: EVERY,
        ..config()
    });
    let block = v.arm.read_state().await.unwrap();
    let elbow = |state: &fakesim_arm::ArmState| state.joint(Joint::ElbowFlex).servo.unwrap();
    assert!((elbow(&block).voltage_v - 12.0).abs() < 1e-9);

    // The supply of servo 3 sags below its Min_Voltage_Limit (4.0 V) while the joint moves.
    v.servos.set_supply_voltage(3, 30).unwrap();
    for (reading, steps) in (2..=EVERY).zip([2300, 2400, 2500]) {
        v.servos.set_present_position(3, steps).unwrap();
        let state = v.arm.read_state().await.unwrap();
        let servo = elbow(&state);
        assert_eq!(servo.steps, steps, "reading {reading} has the new position");
        let carried = |s: &fakesim_arm::ServoReading| (s.voltage_v, s.temperature_c, s.load_percent, s.current_ma);
        assert_eq!(
            carried(&servo),
            carried(&elbow(&block)),
            "reading {reading} carries the block"
        );
        assert_eq!(
            servo.error_flags,
            ServoError::VOLTAGE,
            "reading {reading}: the reply's error byte is current"
        );
    }
    let state = v.arm.read_state().await.unwrap();
    assert!(
        (elbow(&state).voltage_v - 3.0).abs() < 1e-9,
        "reading {} reads the block again",
        EVERY + 1
    );
    assert_eq!(elbow(&state).error_flags, ServoError::VOLTAGE);
    for servo in v.arm.health().servos {
        assert_eq!(
            servo.comm.transactions,
            u64::from(EVERY) + 1,
            "one transaction per reading"
        );
        assert_eq!(servo.comm.failures + servo.comm.retries, 0);
    }
}
