//! What the world does to a shaft: an obstacle it cannot pass (the load rises against it) and
//! gearing that loses steps under load; and the arm options that set them up.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use clap::Parser;
use common::{read, write};
use feetech::control_table as ct;
use feetech::units::degrees_to_steps;
use feetech_emu::cli::ArmArgs;
use feetech_emu::so101::JOINTS;
use feetech_emu::{EmuConfig, LOAD_PER_BLOCKED_STEP, ManualClock, ServoBus, ServoConfig};

/// Servo 1 at 2048 behind an obstacle at `obstacle`, torque on.
fn blocked(obstacle: u16) -> (ServoBus, ManualClock) {
    let config = ServoConfig {
        obstacle: Some(obstacle),
        ..ServoConfig::new(1)
    };
    let (bus, clock) = ServoBus::simulated(&EmuConfig::new(vec![config]));
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    (bus, clock)
}

#[test]
fn the_shaft_stops_at_the_obstacle_and_the_load_rises_with_the_push() {
    let (bus, clock) = blocked(2300);
    write(&bus, 1, &ct::GOAL_POSITION, 2350);
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 2300);
    assert_eq!(read(&bus, 1, &ct::MOVING), 0);
    let expected = (50.0 * LOAD_PER_BLOCKED_STEP) as i32;
    assert_eq!(read(&bus, 1, &ct::PRESENT_LOAD), expected);
    // Further past, the load saturates at the torque limit and the stall current flows.
    write(&bus, 1, &ct::GOAL_POSITION, 3000);
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 2300);
    assert_eq!(read(&bus, 1, &ct::PRESENT_LOAD), 1000);
    assert!(read(&bus, 1, &ct::PRESENT_CURRENT) > 400);
    // Away from it the joint moves freely and rests without load.
    write(&bus, 1, &ct::GOAL_POSITION, 1500);
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 1500);
    assert_eq!(read(&bus, 1, &ct::PRESENT_LOAD), 0);
}

#[test]
fn an_obstacle_below_blocks_downward_and_a_hand_can_move_the_joint_past_it() {
    let (bus, clock) = blocked(1800);
    write(&bus, 1, &ct::GOAL_POSITION, 1000);
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 1800);
    assert_eq!(read(&bus, 1, &ct::PRESENT_LOAD), -1000);
    // Put below it by hand, the joint now lives below: upward is blocked.
    write(&bus, 1, &ct::TORQUE_ENABLE, 0);
    bus.set_present_position(1, 1200).unwrap();
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    write(&bus, 1, &ct::GOAL_POSITION, 2500);
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 1800);
    assert!(read(&bus, 1, &ct::PRESENT_LOAD) > 0);
}

#[test]
fn slipping_gearing_loses_steps_under_load_and_none_at_rest() {
    let slipping = ServoConfig {
        slip_steps_per_s: 2000.0,
        ..ServoConfig::new(2)
    };
    let (bus, clock) = ServoBus::simulated(&EmuConfig::new(vec![ServoConfig::new(1), slipping]));
    for id in [1, 2] {
        write(&bus, id, &ct::TORQUE_ENABLE, 1);
        write(&bus, id, &ct::GOAL_POSITION, 3400);
    }
    clock.advance(Duration::from_millis(250));
    let (clean, slipped) = (
        read(&bus, 1, &ct::PRESENT_POSITION),
        read(&bus, 2, &ct::PRESENT_POSITION),
    );
    // Accelerating (60 % load) then cruising (20 %): hundreds of steps per second lost.
    assert!(clean - slipped > 100, "clean {clean}, slipping {slipped}");
    clock.advance(Duration::from_secs(2));
    assert_eq!(read(&bus, 2, &ct::PRESENT_POSITION), 3400);
    clock.advance(Duration::from_secs(2));
    assert_eq!(read(&bus, 2, &ct::PRESENT_POSITION), 3400, "no load at rest, no slip");
}

#[test]
fn slipping_against_an_obstacle_stays_at_the_obstacle() {
    let config = ServoConfig {
        obstacle: Some(2300),
        slip_steps_per_s: 500.0,
        ..ServoConfig::new(1)
    };
    let (bus, clock) = ServoBus::simulated(&EmuConfig::new(vec![config]));
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    write(&bus, 1, &ct::GOAL_POSITION, 3000);
    for _ in 0..20 {
        clock.advance(Duration::from_millis(50));
        let present = read(&bus, 1, &ct::PRESENT_POSITION);
        assert!(present <= 2300, "past the obstacle at {present}");
    }
    // It chatters a few steps below: slips back, is driven against it again.
    let present = read(&bus, 1, &ct::PRESENT_POSITION);
    assert!((2295..=2300).contains(&present), "at {present}");
    assert!(read(&bus, 1, &ct::PRESENT_LOAD) > 0);
}

/// Arm options as a command line gives them.
#[derive(Debug, Parser)]
struct Command {
    #[command(flatten)]
    arm: ArmArgs,
}

fn arm(argv: &[&str]) -> Result<ArmArgs, clap::Error> {
    Command::try_parse_from(std::iter::once("emu").chain(argv.iter().copied())).map(|c| c.arm)
}

#[test]
fn arm_options_put_the_obstacle_at_the_model_angle_and_the_slip_on_the_joint() {
    let args = arm(&[
        "--obstacle",
        "elbow_flex=30",
        "--joint-offset",
        "elbow_flex=-5",
        "--lose-steps",
        "gripper=500",
    ])
    .unwrap();
    assert!(args.is_custom());
    let servos = args.servos().unwrap();
    let elbow = JOINTS[2];
    let middle = (i32::from(elbow.range.0) + i32::from(elbow.range.1)) / 2;
    let expected = middle + degrees_to_steps(-5.0) + degrees_to_steps(30.0);
    assert_eq!(servos[2].obstacle, Some(u16::try_from(expected).unwrap()));
    assert_eq!(servos[5].slip_steps_per_s, 500.0);
    assert!(servos.iter().enumerate().all(|(i, s)| (i == 2) == s.obstacle.is_some()));

    // The elbow, driven 40° up on the virtual arm, stops 30° up.
    let (bus, clock) = ServoBus::simulated(&EmuConfig::new(servos));
    write(&bus, 3, &ct::TORQUE_ENABLE, 1);
    let start = read(&bus, 3, &ct::PRESENT_POSITION);
    write(&bus, 3, &ct::GOAL_POSITION, start + degrees_to_steps(40.0));
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 3, &ct::PRESENT_POSITION), expected);
    assert!(read(&bus, 3, &ct::PRESENT_LOAD) >= 1000);

    let unknown = arm(&["--obstacle", "elbow=3"]).unwrap().servos().unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "--obstacle elbow: no such joint in the calibration"
    );
    for bad in [
        vec!["--lose-steps", "gripper=0"],
        vec!["--lose-steps", "gripper"],
        vec!["--obstacle", "gripper=500"],
    ] {
        assert!(arm(&bad).is_err(), "{bad:?}");
    }
    assert!(!arm(&[]).unwrap().is_custom());
}
