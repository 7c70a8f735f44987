//! A hand moving the virtual arm: a script the servos follow while torque is off (their goals win
//! while it is on, the hand showing as load), pushes over a time window, and the `--script` and
//! `--push` options that set them up.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use clap::Parser;
use common::{read, write};
use feetech::control_table as ct;
use feetech_emu::cli::{ArmArgs, ScriptArgs};
use feetech_emu::{EmuConfig, LOAD_PER_BLOCKED_STEP, ManualClock, Push, Script, ServoBus, VirtualSo101};

/// The virtual arm on a simulated clock with a hand sweeping half of every range at 60 deg/s.
fn swept() -> (ServoBus, ManualClock, Script) {
    let script = Script::sweep(&VirtualSo101::calibration(), 0.5, 60.0).unwrap();
    let config = EmuConfig {
        script: Some(script.clone()),
        ..VirtualSo101::config()
    };
    let (bus, clock) = ServoBus::simulated(&config);
    (bus, clock, script)
}

#[test]
fn with_torque_off_the_servos_follow_the_script_and_read_its_speed() {
    let (bus, clock, script) = swept();
    let mut seen_moving = 0;
    for _ in 0..200 {
        clock.advance(Duration::from_millis(20));
        let now = bus.elapsed();
        for id in 1..=6 {
            let (at, velocity) = (script.position(id, now).unwrap(), script_speed(&script, id, now));
            let present = read(&bus, id, &ct::PRESENT_POSITION);
            assert!(
                (f64::from(present) - at).abs() <= 0.5,
                "servo {id} at {present}, script {at}"
            );
            // Present_Velocity counts 50 steps/s per unit by default, sign-magnitude.
            let reported = f64::from(read(&bus, id, &ct::PRESENT_VELOCITY)) * 50.0;
            assert!(
                (reported - velocity).abs() <= 26.0,
                "servo {id}: {reported} vs {velocity}"
            );
            assert_eq!(read(&bus, id, &ct::PRESENT_LOAD), 0, "a passive arm carries no load");
            seen_moving += read(&bus, id, &ct::MOVING);
        }
    }
    assert!(seen_moving > 1000, "the arm was moving: {seen_moving}");
    // The sweep reached both ends of the elbow's share of its range over the 4 s.
    let elbow = VirtualSo101::calibration().motors["elbow_flex"];
    let quarter = f64::from(elbow.range_max - elbow.range_min) / 4.0;
    let middle = f64::from(elbow.range_min + elbow.range_max) / 2.0;
    let positions: Vec<f64> = (0..4000)
        .map(|ms| script.position(3, Duration::from_millis(ms)).unwrap())
        .collect();
    let (low, high) = positions
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), p| (l.min(*p), h.max(*p)));
    assert!((high - (middle + quarter)).abs() < 1.0 && (low - (middle - quarter)).abs() < 1.0);
}

/// The script's speed of servo `id` at `at`, from two positions 1 ms apart.
fn script_speed(script: &Script, id: u8, at: Duration) -> f64 {
    let step = Duration::from_millis(1);
    (script.position(id, at).unwrap() - script.position(id, at - step).unwrap()) / step.as_secs_f64()
}

#[test]
fn with_torque_on_the_goal_wins_and_the_hand_shows_as_load() {
    let (bus, clock, script) = swept();
    clock.advance(Duration::from_millis(300));
    let held = read(&bus, 3, &ct::PRESENT_POSITION);
    write(&bus, 3, &ct::TORQUE_ENABLE, 1);
    // The shaft was moving in the hand: the servo brakes and comes back to the pose it took.
    clock.advance(Duration::from_millis(200));
    let mut strained = 0;
    for _ in 0..100 {
        clock.advance(Duration::from_millis(20));
        assert!(
            (read(&bus, 3, &ct::PRESENT_POSITION) - held).abs() <= 1,
            "the goal holds the elbow"
        );
        let hand = script.position(3, bus.elapsed()).unwrap();
        let expected = ((f64::from(held) - hand) * LOAD_PER_BLOCKED_STEP).clamp(-1000.0, 1000.0);
        let load = read(&bus, 3, &ct::PRESENT_LOAD);
        assert!(
            (f64::from(load) - expected).abs() <= 2.0 * LOAD_PER_BLOCKED_STEP,
            "load {load}, {expected}"
        );
        strained += i32::from(load.abs() >= 500);
    }
    assert!(strained > 10, "the hand strained the servo");
    // A goal written with torque on is where the elbow goes, whatever the hand does.
    write(&bus, 3, &ct::GOAL_POSITION, 2400);
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 3, &ct::PRESENT_POSITION), 2400);
    // Torque off: the hand takes the elbow back onto its script.
    write(&bus, 3, &ct::TORQUE_ENABLE, 0);
    clock.advance(Duration::from_millis(20));
    let hand = script.position(3, bus.elapsed()).unwrap();
    assert!((f64::from(read(&bus, 3, &ct::PRESENT_POSITION)) - hand).abs() <= 0.5);
    // Letting go leaves the arm where the hand left it.
    bus.set_script(None);
    let left = read(&bus, 3, &ct::PRESENT_POSITION);
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 3, &ct::PRESENT_POSITION), left);
    assert_eq!(read(&bus, 3, &ct::MOVING), 0);
}

#[test]
fn a_push_displaces_a_servo_holding_its_goal_until_the_window_ends() {
    let (bus, clock) = ServoBus::simulated(&VirtualSo101::config());
    write(&bus, 3, &ct::TORQUE_ENABLE, 1);
    let goal = read(&bus, 3, &ct::PRESENT_POSITION);
    let start = bus.elapsed() + Duration::from_secs(1);
    bus.push(Push {
        id: 3,
        steps: -60.0,
        from: start,
        until: start + Duration::from_secs(2),
    });
    clock.advance(Duration::from_millis(500));
    assert_eq!(read(&bus, 3, &ct::PRESENT_POSITION), goal, "not before the window");
    assert_eq!(read(&bus, 3, &ct::PRESENT_LOAD), 0);
    clock.advance(Duration::from_millis(1000));
    assert_eq!(read(&bus, 3, &ct::PRESENT_POSITION), goal - 60);
    // The servo strains towards its goal, above the pushed shaft.
    assert_eq!(read(&bus, 3, &ct::PRESENT_LOAD), (60.0 * LOAD_PER_BLOCKED_STEP) as i32);
    assert_eq!(read(&bus, 3, &ct::MOVING), 0);
    clock.advance(Duration::from_millis(1000));
    assert_eq!(read(&bus, 3, &ct::PRESENT_POSITION), goal - 60, "held to the end");
    // Let go, the servo drives back to its goal.
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 3, &ct::PRESENT_POSITION), goal);
    assert_eq!(read(&bus, 3, &ct::PRESENT_LOAD), 0);
    // A push on a passive joint just moves it, and it stays there.
    write(&bus, 3, &ct::TORQUE_ENABLE, 0);
    let now = bus.elapsed();
    bus.push(Push {
        id: 3,
        steps: 100.0,
        from: now,
        until: now + Duration::from_secs(1),
    });
    clock.advance(Duration::from_millis(500));
    assert_eq!(read(&bus, 3, &ct::PRESENT_POSITION), goal + 100);
    assert_eq!(read(&bus, 3, &ct::PRESENT_LOAD), 0);
    clock.advance(Duration::from_secs(2));
    assert_eq!(read(&bus, 3, &ct::PRESENT_POSITION), goal + 100);
}

/// Parses the hand's and the arm's options as `feetech-emu` does.
#[derive(Debug, Parser)]
struct Command {
    #[command(flatten)]
    arm: ArmArgs,
    #[command(flatten)]
    hand: ScriptArgs,
}

#[test]
fn waypoints_from_a_file_move_the_arm_in_lerobot_degrees_and_range_units() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wave.csv");
    std::fs::write(
        &file,
        "time_s,shoulder_pan.pos,elbow_flex.pos\n0,0,0\n1,30,-40\n2,0,0\n",
    )
    .unwrap();
    let calibration = VirtualSo101::calibration();
    let pan = calibration.motors["shoulder_pan"];
    let middle = f64::from(pan.range_min + pan.range_max) / 2.0;
    let argv = ["emu", "--script", file.to_str().unwrap(), "--script-loop"];
    let command = Command::parse_from(argv);
    let script = command
        .hand
        .script(&command.arm.calibration().unwrap())
        .unwrap()
        .unwrap();
    let (bus, clock) = ServoBus::simulated(&EmuConfig {
        script: Some(script),
        ..VirtualSo101::config()
    });
    let lift = read(&bus, 2, &ct::PRESENT_POSITION);
    clock.advance(Duration::from_millis(500));
    let expected = middle + 15.0 * 4095.0 / 360.0;
    assert!((f64::from(read(&bus, 1, &ct::PRESENT_POSITION)) - expected).abs() <= 1.0);
    // Looped: 2.5 s is 0.5 s into the second pass.
    clock.advance(Duration::from_secs(2));
    assert!((f64::from(read(&bus, 1, &ct::PRESENT_POSITION)) - expected).abs() <= 1.0);
    // Joints the file leaves out stay where they are.
    assert_eq!(read(&bus, 2, &ct::PRESENT_POSITION), lift);

    // In LeRobot's range units 50 is three quarters up the calibrated range.
    std::fs::write(&file, "time_s,shoulder_pan\n0,50\n").unwrap();
    let argv = ["emu", "--script", file.to_str().unwrap(), "--script-units", "range"];
    let command = Command::parse_from(argv);
    let script = command.hand.script(&calibration).unwrap().unwrap();
    let quarter = f64::from(pan.range_max - pan.range_min) / 4.0;
    let at = script.position(1, Duration::from_secs(9)).unwrap();
    assert!((at - (middle + quarter)).abs() <= 0.5, "{at}");
}

#[test]
fn the_command_line_builds_sweeps_and_pushes_and_refuses_bad_ones() {
    let calibration = VirtualSo101::calibration();
    let command = Command::parse_from([
        "emu",
        "--script",
        "sweep",
        "--sweep-share",
        "0.2",
        "--push",
        "wrist_flex=-8@1..2",
    ]);
    let script = command.hand.script(&calibration).unwrap().unwrap();
    let wrist = calibration.motors["wrist_flex"];
    let tenth = f64::from(wrist.range_max - wrist.range_min) / 10.0;
    let highest = (0..20_000)
        .map(|ms| script.position(4, Duration::from_millis(ms)).unwrap())
        .fold(f64::MIN, f64::max);
    assert!((highest - f64::from(wrist.range_min + wrist.range_max) / 2.0 - tenth).abs() < 1.0);
    let pushes = command.hand.pushes(&calibration).unwrap();
    assert_eq!(
        pushes,
        [Push {
            id: 4,
            steps: -91.0,
            from: Duration::from_secs(1),
            until: Duration::from_secs(2)
        }]
    );
    for bad in [
        vec!["--script", "/no/such/file"],
        vec!["--script", "sweep", "--script-units", "radians"],
        vec!["--push", "wrist_flex=-8"],
    ] {
        assert!(
            Command::try_parse_from(std::iter::once("emu").chain(bad.iter().copied())).is_err(),
            "{bad:?}"
        );
    }
    let too_wide = Command::parse_from(["emu", "--script", "sweep", "--sweep-share", "1.5"]);
    assert!(too_wide.hand.script(&calibration).is_err());
}
