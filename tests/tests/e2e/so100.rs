//! A daemon run with `--arm so100`: it names its arm and joints, takes the SO-100's joint names
//! and LeRobot's labels alike, refuses degrees naming the conversion, runs an episode, and
//! mirrors an emulated SO-100.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_arm::{ArmType, Joint};
use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_e2e::{CallMetadata, TestServer, named, until_sample};
use fakesim_episode::tasks;
use fakesim_feetech_arm::mapping::JointMapping;
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::*;
use feetech_emu::{EmuConfig, VirtualArm, VirtualSo101};
use tonic::Code;
use tonic::transport::Channel;
use uom::si::angle::radian;

async fn so100() -> TestServer {
    TestServer::start_with(|s| {
        s.arm = ArmType::So100;
        s.image_size = 32;
    })
    .await
    .unwrap()
}

async fn pan(robot: &mut RobotServiceClient<Channel>) -> f64 {
    let state = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(state.joint_ids[0], "Rotation");
    assert_eq!(state.joint_names[0], "Rotation (shoulder_pan)");
    state.positions[0]
}

async fn set(robot: &mut RobotServiceClient<Channel>, key: &str, value: f64) -> Result<Vec<String>, tonic::Status> {
    let request = SetJointPositionsRequest {
        positions: Some(named(&[(key, value)])),
        hold: true,
    };
    Ok(robot.set_joint_positions(request).await?.into_inner().written_joints)
}

#[tokio::test(flavor = "multi_thread")]
async fn model_info_names_the_so100_and_its_joints_with_their_labels() {
    let server = so100().await;
    let info = server
        .robot()
        .await
        .unwrap()
        .get_model_info(GetModelInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.robot, "so100");
    assert_eq!(info.lerobot_robot, "so100_follower");
    let ids: Vec<&str> = info.joints.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, ["Rotation", "Pitch", "Elbow", "Wrist_Pitch", "Wrist_Roll", "Jaw"]);
    assert_eq!(info.action_keys, ids);
    assert_eq!(info.joint_names[0], "Rotation (shoulder_pan)");
    assert_eq!(info.joint_names[5], "Jaw (gripper)");
    assert_eq!(info.joints[1].label, "shoulder_lift");
    assert_eq!((info.joints[1].range_min, info.joints[1].range_max), (-3.32, 0.174));
    assert_eq!(info.observation_keys[0], "pos.shoulder_pan");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn rotation_shoulder_pan_and_so100_qualified_names_move_the_same_joint() {
    let server = so100().await;
    let mut robot = server.robot().await.unwrap();
    for (key, value) in [
        ("Rotation", 0.3),
        ("shoulder_pan", -0.4),
        ("so100/shoulder_pan", 0.2),
        ("SO100/rotation", -0.1),
    ] {
        assert_eq!(set(&mut robot, key, value).await.unwrap(), ["Rotation"], "{key}");
        assert!((pan(&mut robot).await - value).abs() < 1e-9, "{key}");
    }
    let refused = set(&mut robot, "so101/shoulder_pan", 0.1).await.unwrap_err();
    assert_eq!(refused.code(), Code::NotFound, "{refused:?}");
    assert!(
        refused
            .message()
            .contains("known: Rotation (shoulder_pan), Pitch (shoulder_lift)"),
        "{}",
        refused.message()
    );
    let refused = set(&mut robot, "1", 0.1).await.unwrap_err();
    assert_eq!(refused.code(), Code::NotFound, "{refused:?}");
    assert!((pan(&mut robot).await + 0.1).abs() < 1e-9, "refusals moved nothing");
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn degrees_given_as_radians_are_refused_naming_the_conversion() {
    let server = so100().await;
    let mut robot = server.robot().await.unwrap();
    for key in ["shoulder_pan", "Rotation"] {
        let refused = set(&mut robot, key, -96.2).await.unwrap_err();
        // The error table's code for a value out of its range, as on the SO-101.
        assert_eq!(refused.code(), Code::OutOfRange, "{refused:?}");
        assert_eq!(
            refused.message(),
            "shoulder_pan=-96.2 outside [-1.92, 1.92] rad (radians, not degrees: -96.2 deg = -1.679 rad)"
        );
    }
    server.stop().await.unwrap();
}

/// A layout of the lift the scripted pick solves on both arms (the episode crate's test runs
/// it over four).
const LAYOUT: u32 = 2;

#[tokio::test(flavor = "multi_thread")]
async fn a_scripted_lift_runs_to_the_end_on_the_so100() {
    let server = so100().await;
    let mut session = server.session().await.unwrap();
    let reset = session
        .reset_task(ResetTaskRequest {
            suite: Some(tasks::SUITE.into()),
            task_index: Some(0),
            init_state_index: Some(LAYOUT),
            ..ResetTaskRequest::default()
        })
        .await
        .unwrap()
        .into_inner();
    let cube = tasks::layout(0, LAYOUT).cube_red;
    let position = |state: Option<EefState>| {
        let p = state.unwrap().eef_pos_m.unwrap();
        [p.x, p.y, p.z]
    };
    let mut tcp = position(reset.state);
    for target in [[cube[0], cube[1], 0.87], [cube[0], cube[1], 0.818]] {
        for _ in 0..4 {
            let delta = Vec3 {
                x: target[0] - tcp[0],
                y: target[1] - tcp[1],
                z: target[2] - tcp[2],
            };
            let moved = session
                .r#move(MoveRequest {
                    delta_xyz: Some(delta),
                    delta_rpy: None,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            tcp = position(moved.state);
            if moved.action.unwrap().stop_reason() != MoveStopReason::StepCap {
                break;
            }
        }
    }
    let close = GripperRequest {
        command: GripperCommand::Close.into(),
        ..Default::default()
    };
    session.gripper(close).await.unwrap();
    let lift = MoveRequest {
        delta_xyz: Some(Vec3 {
            x: 0.0,
            y: 0.0,
            z: 0.08,
        }),
        delta_rpy: None,
        ..Default::default()
    };
    session.r#move(lift).await.unwrap();
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    assert_eq!(stopped.status(), EpisodeStatus::Stopped);
    assert!(
        stopped.success,
        "the SO-100 lifted the cube: {}",
        stopped.validation_json
    );
    server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn mirror_of_an_emulated_so100_follows_its_servos_through_the_so100_mapping() {
    let calibration = VirtualArm::So100.calibration();
    let servos = VirtualSo101::holding(&calibration, &[]).unwrap();
    let rig = VirtualArmServer::start_calibrated(EmuConfig::new(servos), &calibration, StartMode::Mirror, |s| {
        s.arm = ArmType::So100;
    })
    .await
    .unwrap();
    let twin = fakesim_twin::Sim::load(&fakesim_twin::Scene::builtin(ArmType::So100, true), 10)
        .unwrap()
        .joint_ranges();
    let mapping = JointMapping::so100().bind(&calibration, &twin).unwrap();
    // The hand moves the shoulder lift near the end of its travel and the elbow past its middle.
    let servos = rig.bus.servos();
    servos.set_present_position(2, 1000).unwrap();
    servos.set_present_position(3, 2900).unwrap();
    let lift = mapping.servo_to_twin(Joint::ShoulderLift, 1000).get::<radian>();
    let elbow = mapping.servo_to_twin(Joint::ElbowFlex, 2900).get::<radian>();
    assert!(
        lift < -2.8 && elbow > 2.5,
        "poses far from the SO-101's: {lift}, {elbow}"
    );
    let mut hardware = HardwareServiceClient::new(rig.server.with_metadata(CallMetadata::none()).await.unwrap());
    let sample = until_sample(&mut hardware, 200, |s| {
        s.reading_seq.is_some()
            && (s.joints[1].twin_rad - lift).abs() < 1e-3
            && (s.joints[2].twin_rad - elbow).abs() < 1e-3
    })
    .await
    .unwrap();
    assert_eq!(sample.joints[1].twin_joint, "Pitch");
    assert_eq!(sample.joints[1].label, "shoulder_lift");
    assert!((sample.joints[2].real_rad.unwrap() - elbow).abs() < 1e-3);
    rig.server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_so100_daemon_refuses_a_joint_mapping_of_the_so101_s_joints() {
    let calibration = VirtualArm::So100.calibration();
    let servos = VirtualSo101::holding(&calibration, &[]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mapping = dir.path().join("so101.mapping.json");
    std::fs::write(&mapping, JointMapping::so101().to_json()).unwrap();
    let rig = VirtualArmServer::start_calibrated(EmuConfig::new(servos), &calibration, StartMode::Mirror, move |s| {
        s.arm = ArmType::So100;
        s.mapping = Some(mapping);
    })
    .await
    .unwrap();
    // The server ends at start-up, with the refusal.
    let refused = rig.server.stop().await.unwrap_err();
    assert!(
        format!("{refused:#}").contains("the joint mapping names the so101's joints, but the daemon runs --arm so100"),
        "{refused:#}"
    );
}
