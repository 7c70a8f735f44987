//! The daemon against emulated arms holding calibrations as they are in the field (ranges
//! wider or narrower than the model's, an older LeRobot file): it starts, reports the
//! effective ranges, mirrors (clamping and flagging what the twin cannot show), runs a hil
//! episode, and never sends a goal outside the effective ranges. A stale arm is refused and
//! fixed by --write-calibration-to-servos; goals ramp from the held pose when torque comes on;
//! a servo whose overload is still present keeps its torque off.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::time::Duration;

use fakesim_arm::Joint;
use fakesim_e2e::{Conn, TestServer};
use fakesim_feetech_arm::mapping::{CalibratedMapping, JointMapping};
use fakesim_hil::Mode as StartMode;
use fakesim_proto::errors::error_reason;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use feetech::calibration::Calibration;
use feetech::control_table::{GOAL_POSITION, HOMING_OFFSET, TORQUE_ENABLE};
use feetech::protocol::status::ServoError;
use feetech_emu::faults::FaultWindow;
use feetech_emu::field::field_calibrations;
use feetech_emu::{EmuConfig, PtyBus, VirtualSo101, WriteRecord, serve_pty};
use tempfile::TempDir;
use tokio_stream::StreamExt;
use tonic::Code;
use uom::si::angle::radian;
use uom::si::f64::Angle;

struct Arm {
    bus: PtyBus,
    file: PathBuf,
    _dir: TempDir,
}

/// An emulated arm whose servos hold `held`, and `file` written for the daemon.
async fn arm(held: &Calibration, file: &Calibration) -> Arm {
    let servos = VirtualSo101::holding(held, &[]).unwrap();
    let bus = serve_pty(EmuConfig::new(servos)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("follower.json");
    file.save(&path).unwrap();
    Arm {
        bus,
        file: path,
        _dir: dir,
    }
}

async fn daemon(arm: &Arm, write_calibration: bool) -> anyhow::Result<TestServer> {
    let (port, file) = (arm.bus.path().to_owned(), arm.file.clone());
    TestServer::start_with(move |s| {
        s.port = Some(port);
        s.calibration = Some(file);
        s.mode = StartMode::Mirror;
        s.image_size = 16;
        s.write_calibration_to_servos = write_calibration;
    })
    .await
}

fn twin_ranges() -> [fakesim_twin::values::Bounds; 6] {
    fakesim_twin::Sim::load(&fakesim_twin::Scene::Tabletop, 10)
        .unwrap()
        .joint_ranges()
}

fn mapping(calibration: &Calibration) -> CalibratedMapping {
    JointMapping::so101().bind(calibration, &twin_ranges()).unwrap()
}

async fn hardware(server: &TestServer) -> HardwareServiceClient<Conn> {
    HardwareServiceClient::new(server.leased().await.unwrap())
}

async fn status(hw: &mut HardwareServiceClient<Conn>) -> GetHardwareStatusResponse {
    hw.get_hardware_status(GetHardwareStatusRequest::default())
        .await
        .unwrap()
        .into_inner()
}

/// Reads the status once per joint-state sample until `done` holds.
async fn until_status(
    hw: &mut HardwareServiceClient<Conn>,
    done: impl Fn(&GetHardwareStatusResponse) -> bool,
) -> GetHardwareStatusResponse {
    let mut stream = hw
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 50.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    for _ in 0..300 {
        let now = status(hw).await;
        if done(&now) {
            return now;
        }
        stream.next().await.unwrap().unwrap();
    }
    panic!("status condition not met within 300 samples");
}

fn set_mode(mode: Mode, sync: SyncOption) -> SetModeRequest {
    SetModeRequest {
        mode: mode.into(),
        sync: sync.into(),
        sync_max_speed_rad_s: Some(2.0),
    }
}

fn goal_writes(log: &[WriteRecord], id: u8) -> Vec<(Duration, i32, i32)> {
    log.iter()
        .filter(|r| r.id == id)
        .filter_map(|r| r.value(&GOAL_POSITION).map(|goal| (r.at, goal, r.present_before)))
        .collect()
}

/// The effective range of a joint in servo steps.
fn effective_steps(mapping: &CalibratedMapping, joint: Joint, effective: (f64, f64)) -> (i32, i32) {
    let a = mapping.twin_to_servo(joint, Angle::new::<radian>(effective.0)).unwrap();
    let b = mapping.twin_to_servo(joint, Angle::new::<radian>(effective.1)).unwrap();
    (a.min(b), a.max(b))
}

/// One field calibration end to end.
async fn field_arm_end_to_end(name: &str, calibration: &Calibration) {
    let arm = arm(calibration, calibration).await;
    let server = daemon(&arm, false).await.unwrap();
    let mapping = mapping(calibration);
    let mut hw = hardware(&server).await;
    if let Err(refused) = hw.get_hardware_status(GetHardwareStatusRequest::default()).await {
        panic!("{name}: {refused:?}: {:#}", server.stop().await.err().unwrap());
    }
    let mut robot = RobotServiceClient::new(server.leased().await.unwrap());

    // Effective ranges: in model info and in the status, inside both ranges.
    let info = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    let now = status(&mut hw).await;
    for joint in Joint::ALL {
        let i = joint.index();
        let (model, servo) = (&info.joints[i], &now.servos[i]);
        let (lo, hi) = (model.effective_min.unwrap(), model.effective_max.unwrap());
        assert_eq!(
            (lo, hi),
            (servo.effective_min_rad, servo.effective_max_rad),
            "{name} {joint:?}"
        );
        assert!(
            lo >= model.range_min && hi <= model.range_max && lo < hi,
            "{name} {joint:?}"
        );
        assert!(lo >= servo.calibrated_min_rad - 1e-9 && hi <= servo.calibrated_max_rad + 1e-9);
    }

    // A joint swept beyond the model: the mirror clamps and flags it.
    let pan = calibration.motors["shoulder_pan"];
    if mapping.servo_to_twin(Joint::ShoulderPan, pan.range_max).get::<radian>() > info.joints[0].range_max {
        arm.bus.servos().set_present_position(1, pan.range_max - 5).unwrap();
        // The twin follows to its range's end (how fast is its dynamics': the published
        // inertials brought it there a status or two after the flag), and stays flagged there.
        let range_max = info.joints[0].range_max;
        let flagged = until_status(&mut hw, |s| {
            s.servos[0].outside_twin_range && (s.servos[0].twin_actual_rad - range_max).abs() < 0.02
        })
        .await;
        assert!(flagged.servos[0].twin_actual_rad <= range_max + 1e-6, "{name}");
        arm.bus
            .servos()
            .set_present_position(1, (pan.range_min + pan.range_max) / 2)
            .unwrap();
        until_status(&mut hw, |s| !s.servos[0].outside_twin_range).await;
    }

    // A hil episode.
    arm.bus.servos().clear_write_log();
    let mut session = SessionServiceClient::new(server.leased().await.unwrap());
    session.reset_task(ResetTaskRequest::default()).await.unwrap();
    hw.set_mode(set_mode(Mode::Hil, SyncOption::MoveArmToTwin))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let moved = session
        .r#move(MoveRequest {
            delta_xyz: Some(Vec3 {
                x: 0.0,
                y: 0.03,
                z: 0.0,
            }),
            delta_rpy: None,
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
        .into_inner();
    assert!(moved.action.is_some());
    session.stop_episode(StopEpisodeRequest {}).await.unwrap();

    // Never a goal outside the effective range.
    let log = arm.bus.servos().write_log();
    for joint in Joint::ALL {
        let servo = &now.servos[joint.index()];
        let (lo, hi) = effective_steps(&mapping, joint, (servo.effective_min_rad, servo.effective_max_rad));
        let goals = goal_writes(&log, mapping.servo_id(joint));
        assert!(!goals.is_empty(), "{name} {joint:?}: no goal written");
        for (_, goal, _) in goals {
            assert!(
                (lo - 1..=hi + 1).contains(&goal),
                "{name} {joint:?}: goal {goal} outside {lo}..{hi}"
            );
        }
    }
    server.stop().await.unwrap();
    arm.bus.shutdown().await.unwrap();
}

#[tokio::test]
async fn every_field_calibration_starts_mirrors_and_runs_a_hil_episode_inside_its_effective_ranges() {
    let mut arms = field_calibrations();
    // A variation: follower a's ranges narrowed by 300 steps on each side.
    let mut narrow = arms[0].1.clone();
    for motor in narrow.motors.values_mut().filter(|m| m.range_max - m.range_min > 1200) {
        motor.range_min += 300;
        motor.range_max -= 300;
    }
    arms.push(("follower_a narrowed", narrow));
    for (name, calibration) in &arms {
        field_arm_end_to_end(name, calibration).await;
    }
}

#[tokio::test]
async fn a_stale_arm_is_refused_naming_the_joint_and_writing_the_file_fixes_it() {
    let arms = field_calibrations();
    let (file, held) = (&arms[0].1, &arms[1].1);
    let arm = arm(held, file).await;
    // Start-up fails before serving: stopping the server returns why.
    let refused = format!("{:#}", daemon(&arm, false).await.unwrap().stop().await.unwrap_err());
    let (servo, expected) = (
        held.motors["shoulder_pan"].homing_offset,
        file.motors["shoulder_pan"].homing_offset,
    );
    assert!(
        refused.contains(&format!(
            "joint shoulder_pan (id 1): Homing_Offset is {servo} in the servo, {expected} in the file"
        )),
        "{refused}"
    );
    assert!(refused.contains("--write-calibration-to-servos"), "{refused}");
    let server = daemon(&arm, true).await.unwrap();
    // Started: the file was written, then verified like any connect.
    assert!(status(&mut hardware(&server).await).await.bus_connected);
    for (name, motor) in file.by_id() {
        assert_eq!(
            arm.bus.servos().persisted_register(motor.id, &HOMING_OFFSET).unwrap(),
            motor.homing_offset,
            "{name}"
        );
    }
    server.stop().await.unwrap();
}

#[tokio::test]
async fn entering_hil_holds_the_present_pose_then_ramps_and_a_present_overload_keeps_torque_off() {
    let calibration = VirtualSo101::calibration();
    let arm = arm(&calibration, &calibration).await;
    let server = daemon(&arm, false).await.unwrap();
    let mut hw = hardware(&server).await;
    let mut robot = RobotServiceClient::new(server.leased().await.unwrap());
    let servos = arm.bus.servos();
    servos.clear_write_log();
    hw.set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
        .await
        .unwrap();
    // A far target: the first goals hold the present pose, later ones ramp at 0.5 rad/s.
    let target = [0.3, -0.2, 0.3, 0.2, 0.25, 0.4];
    for _ in 0..5 {
        robot
            .tick(TickRequest {
                action: target.to_vec(),
                ..TickRequest::default()
            })
            .await
            .unwrap();
    }
    let step_limit = ramp_step_limit(&mut robot).await;
    assert_torque_on_holds_then_ramps(&servos.write_log(), step_limit);

    // An overload that stays: torque goes off and neither a mode switch nor motion brings it back.
    let until = servos.write_log().last().map_or(Duration::ZERO, |r| r.at) + Duration::from_secs(3600);
    servos.update_faults(|f| {
        f.windows.push(FaultWindow {
            id: 2,
            error: ServoError::OVERLOAD,
            from: Duration::ZERO,
            until: Some(until),
        });
    });
    until_status(&mut hw, |s| !s.servos[1].torque_enabled).await;
    let refused = hw
        .set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    assert_eq!(error_reason(&refused).as_deref(), Some("servo_fault"), "{refused:?}");
    assert!(refused.message().contains("shoulder_lift"), "{}", refused.message());
    let _ = robot
        .tick(TickRequest {
            action: target.to_vec(),
            ..TickRequest::default()
        })
        .await;
    // ResetTask in hil is atomic: the arm cannot go home, so no episode starts.
    let mut session = SessionServiceClient::new(server.leased().await.unwrap());
    let refused = session.reset_task(ResetTaskRequest::default()).await.unwrap_err();
    assert_eq!(error_reason(&refused).as_deref(), Some("servo_fault"), "{refused:?}");
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.run, None, "no episode started");
    assert!(
        (1..=6).all(|id| servos.register(id, &TORQUE_ENABLE).unwrap() == 0),
        "torque stays off"
    );
    server.stop().await.unwrap();
}

#[tokio::test]
async fn with_the_aligned_mapping_the_twin_tcp_is_where_the_offset_arm_is() {
    const HOME_POSE: [f64; 6] = fakesim_twin::arms::SO101.home;
    use feetech_emu::so101::JointOffset;

    let calibration = field_calibrations().remove(1).1;
    let offsets: Vec<JointOffset> = [("shoulder_lift", -4.0), ("wrist_flex", 6.0), ("wrist_roll", 15.0)]
        .iter()
        .map(|(label, degrees)| JointOffset {
            label: (*label).to_owned(),
            degrees: *degrees,
        })
        .collect();
    let shift = |joint: Joint| -> i32 {
        offsets
            .iter()
            .filter(|o| o.label == joint.label())
            .map(JointOffset::steps)
            .sum()
    };
    // The table `fakesim-hil align` writes for this arm: each offset undone.
    let mut table = JointMapping::so101();
    for joint in Joint::ALL {
        table.joints[joint.index()].offset_rad = -f64::from(shift(joint)) * std::f64::consts::TAU / 4095.0;
    }
    let servos = VirtualSo101::holding(&calibration, &offsets).unwrap();
    let bus = serve_pty(EmuConfig::new(servos)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (file, mapping_file) = (dir.path().join("follower.json"), dir.path().join("mapping.json"));
    calibration.save(&file).unwrap();
    std::fs::write(&mapping_file, table.to_json()).unwrap();
    let (port, mapping_path) = (bus.path().to_owned(), mapping_file.clone());
    let server = TestServer::start_with(move |s| {
        s.port = Some(port);
        s.calibration = Some(file);
        s.mapping = Some(mapping_path);
        s.mode = StartMode::Mirror;
        s.image_size = 16;
    })
    .await
    .unwrap();
    // The arm is put in the home pose: its servos read the pose plus their joint's offset.
    let nominal = mapping(&calibration);
    for joint in Joint::ALL {
        let angle = Angle::new::<radian>(HOME_POSE[joint.index()]);
        let steps = nominal.twin_to_servo(joint, angle).unwrap() + shift(joint);
        bus.servos()
            .set_present_position(nominal.servo_id(joint), steps)
            .unwrap();
    }
    let mut hw = hardware(&server).await;
    let step_rad = 2.0 * std::f64::consts::TAU / 4096.0;
    let mirrored = until_status(&mut hw, |s| {
        Joint::ALL
            .iter()
            .all(|j| (s.servos[j.index()].twin_actual_rad - HOME_POSE[j.index()]).abs() <= step_rad)
    })
    .await;
    assert_eq!(mirrored.mapping_file.as_deref(), Some(mapping_file.to_str().unwrap()));
    let mut robot = RobotServiceClient::new(server.leased().await.unwrap());
    let tcp = robot
        .forward_kinematics(ForwardKinematicsRequest {
            name: Some("tcp".into()),
        })
        .await
        .unwrap()
        .into_inner();
    let twin_tcp = tcp.frames[0].pose.unwrap().position_m.unwrap();
    let mut reference = fakesim_twin::Sim::load(&fakesim_twin::Scene::Tabletop, 10).unwrap();
    reference
        .set_joint_positions(&fakesim_twin::JointValues::Ordered(HOME_POSE.to_vec()), true)
        .unwrap();
    let arm_tcp = reference.forward_kinematics(Some("tcp")).unwrap()[0].pose.pos;
    let off =
        ((twin_tcp.x - arm_tcp[0]).powi(2) + (twin_tcp.y - arm_tcp[1]).powi(2) + (twin_tcp.z - arm_tcp[2]).powi(2))
            .sqrt();
    assert!(off < 0.002, "the twin's TCP is {off} m from the arm's");
    server.stop().await.unwrap();
}

/// The most a goal may move in one control tick at the default ramp speed (0.5 rad/s), in steps.
async fn ramp_step_limit(robot: &mut RobotServiceClient<Conn>) -> f64 {
    let rate = robot
        .get_model_info(GetModelInfoRequest {})
        .await
        .unwrap()
        .into_inner()
        .control_rate_hz;
    0.5 / rate * 4096.0 / std::f64::consts::TAU
}

/// On every servo: the goal written before torque came on is the present position, and no later
/// goal moves more than `step_limit` (plus rounding) from the one before.
fn assert_torque_on_holds_then_ramps(log: &[WriteRecord], step_limit: f64) {
    for id in 1..=6u8 {
        let torque_on = log
            .iter()
            .position(|r| r.id == id && r.value(&TORQUE_ENABLE) == Some(1))
            .unwrap();
        let (_, hold, present) = *goal_writes(&log[..torque_on], id).last().unwrap();
        assert_eq!(
            hold, present,
            "servo {id}: the goal before torque is the present position"
        );
        assert_ramps_from(&log[torque_on..], id, hold, step_limit);
    }
}

/// No goal of servo `id` in `log` moves more than `step_limit` (plus rounding) from the one before,
/// starting at `from`.
fn assert_ramps_from(log: &[WriteRecord], id: u8, from: i32, step_limit: f64) {
    let mut previous = from;
    for (_, goal, _) in goal_writes(log, id) {
        let change = f64::from((goal - previous).abs());
        assert!(change <= step_limit + 2.0, "servo {id}: a jump of {change} steps");
        previous = goal;
    }
}

#[tokio::test]
async fn resuming_after_a_watchdog_hold_or_an_estop_reset_ramps_from_the_held_pose() {
    let calibration = VirtualSo101::calibration();
    let arm = arm(&calibration, &calibration).await;
    let server = daemon(&arm, false).await.unwrap();
    let mut hw = hardware(&server).await;
    let mut robot = RobotServiceClient::new(server.leased().await.unwrap());
    let servos = arm.bus.servos();
    let step_limit = ramp_step_limit(&mut robot).await;
    let far = TickRequest {
        action: vec![0.3, -0.2, 0.3, 0.2, 0.25, 0.4],
        ..TickRequest::default()
    };
    hw.set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
        .await
        .unwrap();

    // No command for longer than the watchdog's timeout: it holds the arm where it is.
    let before = status(&mut hw).await.safety_events;
    until_status(&mut hw, |s| s.safety_events > before).await;
    let held_at = servos.write_log().len();
    for _ in 0..5 {
        robot.tick(far.clone()).await.unwrap();
    }
    let log = servos.write_log();
    for id in 1..=6u8 {
        let (_, hold, _) = *goal_writes(&log[..held_at], id).last().unwrap();
        assert!(
            !goal_writes(&log[held_at..], id).is_empty(),
            "servo {id}: commands resumed"
        );
        assert_ramps_from(&log[held_at..], id, hold, step_limit);
    }

    // The emergency stop, its reset and hil again: held at the present pose, then the ramp.
    hw.emergency_stop(EmergencyStopRequest {
        reason: "test".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    hw.reset_emergency_stop(ResetEmergencyStopRequest::default())
        .await
        .unwrap();
    servos.clear_write_log();
    hw.set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
        .await
        .unwrap();
    for _ in 0..5 {
        robot.tick(far.clone()).await.unwrap();
    }
    assert_torque_on_holds_then_ramps(&servos.write_log(), step_limit);
    server.stop().await.unwrap();
}
