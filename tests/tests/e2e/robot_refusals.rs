//! Every RobotService refusal: its code, its `ErrorInfo` reason and metadata, a message a
//! caller can act on, and no change to the robot.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::{TestServer, named, ordered};
use fakesim_proto::errors::error_info;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::*;
use std::collections::HashMap;
use std::fmt::Debug;
use tonic::transport::Channel;
use tonic::{Code, Response, Status};

/// A server that has run a few steps, with its state noted before the bad call.
struct Fixture {
    _server: TestServer,
    robot: RobotServiceClient<Channel>,
    before: GetRobotStateResponse,
}

/// What a refusal said: its message and its `ErrorInfo` metadata.
struct Refusal {
    message: String,
    meta: HashMap<String, String>,
}

impl Fixture {
    async fn new() -> Self {
        let server = TestServer::start().await.unwrap();
        let mut robot = server.robot().await.unwrap();
        robot.step(StepRequest { n_steps: 25 }).await.unwrap();
        // A physics step leaves body poses at the positions before its integration; refreshing
        // them here makes the TCP in `before` match what any later forward kinematics computes.
        robot
            .forward_kinematics(ForwardKinematicsRequest {
                name: Some("tcp".into()),
            })
            .await
            .unwrap();
        let before = robot
            .get_robot_state(GetRobotStateRequest::default())
            .await
            .unwrap()
            .into_inner();
        Fixture {
            _server: server,
            robot,
            before,
        }
    }

    /// Checks the call was refused with `code` and `reason` and that the robot did not change.
    async fn refused<T: Debug>(&mut self, result: Result<Response<T>, Status>, code: Code, reason: &str) -> Refusal {
        let status = result.expect_err("the call should have been refused");
        assert_eq!(status.code(), code, "{}", status.message());
        let info = error_info(&status).expect("every refusal carries an ErrorInfo");
        assert_eq!(info.reason, reason, "{}", status.message());
        let after = self
            .robot
            .get_robot_state(GetRobotStateRequest::default())
            .await
            .unwrap()
            .into_inner();
        assert_eq!(after, self.before, "the refused call changed the robot");
        Refusal {
            message: status.message().to_owned(),
            meta: info.metadata,
        }
    }

    async fn send(
        &mut self,
        action: JointValues,
        n_substeps: Option<u32>,
    ) -> Result<Response<SendActionResponse>, Status> {
        self.robot
            .send_action(SendActionRequest {
                action: Some(action),
                n_substeps,
                unit: 0,
            })
            .await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn nan_is_refused_naming_the_joint() {
    let mut fx = Fixture::new().await;
    let result = fx.send(named(&[("1", 0.0), ("2", f64::NAN)]), None).await;
    let refusal = fx.refused(result, Code::InvalidArgument, "non_finite").await;
    assert_eq!(refusal.message, "shoulder_lift=NaN is not a finite number");
    assert_eq!(refusal.meta["joint"], "shoulder_lift");
    assert_eq!(refusal.meta["value"], "NaN");

    let result = fx
        .robot
        .set_joint_velocities(SetJointVelocitiesRequest {
            velocities: Some(ordered(&[0.0, 0.0, f64::INFINITY, 0.0, 0.0, 0.0])),
        })
        .await;
    let refusal = fx.refused(result, Code::InvalidArgument, "non_finite").await;
    assert_eq!(refusal.meta["joint"], "elbow_flex");
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_length_names_the_count_and_order() {
    let mut fx = Fixture::new().await;
    let result = fx.send(ordered(&[0.0; 5]), None).await;
    let refusal = fx.refused(result, Code::InvalidArgument, "wrong_length").await;
    assert!(
        refusal
            .message
            .starts_with("expected 6 values in the order [1 (shoulder_pan), 2 (shoulder_lift)"),
        "{}",
        refusal.message
    );
    assert!(refusal.message.ends_with("got 5"), "{}", refusal.message);
    assert_eq!(
        (refusal.meta["expected"].as_str(), refusal.meta["got"].as_str()),
        ("6", "5")
    );

    let result = fx
        .robot
        .tick(TickRequest {
            action: vec![0.0; 7],
            ..Default::default()
        })
        .await;
    let refusal = fx.refused(result, Code::InvalidArgument, "wrong_length").await;
    assert_eq!(refusal.meta["got"], "7");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_joints_are_all_listed() {
    let mut fx = Fixture::new().await;
    let result = fx.send(named(&[("1", 0.0), ("elbow", 0.1), ("7", 0.2)]), None).await;
    let refusal = fx.refused(result, Code::NotFound, "unknown_name").await;
    assert_eq!(refusal.meta["unknown"], "7, elbow");
    assert_eq!(refusal.meta["kind"], "joint");
    assert!(refusal.message.contains(r#"["7", "elbow"]"#), "{}", refusal.message);
    assert!(refusal.meta["known"].contains("3 (elbow_flex)"), "{:?}", refusal.meta);
}

#[tokio::test(flavor = "multi_thread")]
async fn degrees_given_as_radians_name_the_unit_and_conversion() {
    let mut fx = Fixture::new().await;
    let result = fx
        .robot
        .set_joint_positions(SetJointPositionsRequest {
            positions: Some(named(&[("shoulder_pan", -96.2)])),
            hold: true,
        })
        .await;
    let refusal = fx.refused(result, Code::OutOfRange, "out_of_range").await;
    assert_eq!(
        refusal.message,
        "shoulder_pan=-96.2 outside [-1.92, 1.92] rad (radians, not degrees: -96.2 deg = -1.679 rad)"
    );
    assert_eq!(refusal.meta["joint"], "shoulder_pan");
    assert_eq!(refusal.meta["value"], "-96.2");
    assert_eq!(refusal.meta["range"], "[-1.92, 1.92]");
    assert_eq!(refusal.meta["unit"], "rad");
    assert_eq!(refusal.meta["hint"], "radians, not degrees: -96.2 deg = -1.679 rad");

    let result = fx.send(named(&[("gripper", 500.0)]), None).await;
    let refusal = fx.refused(result, Code::OutOfRange, "out_of_range").await;
    assert!(
        !refusal.meta.contains_key("hint"),
        "500 is not a plausible angle in degrees either"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_joint_given_twice_is_refused() {
    let mut fx = Fixture::new().await;
    let result = fx.send(named(&[("1", 0.0), ("shoulder_pan", 0.1)]), None).await;
    let refusal = fx.refused(result, Code::InvalidArgument, "duplicate_joint").await;
    assert_eq!(refusal.meta["joint"], "1 (shoulder_pan)");
}

#[tokio::test(flavor = "multi_thread")]
async fn step_beyond_the_cap_is_refused() {
    let mut fx = Fixture::new().await;
    let result = fx.robot.step(StepRequest { n_steps: 100_001 }).await;
    let refusal = fx.refused(result, Code::InvalidArgument, "count_out_of_range").await;
    assert_eq!(refusal.message, "n_steps=100001 outside [0, 100000]");
    assert_eq!(refusal.meta["field"], "n_steps");
    assert_eq!(refusal.meta["value"], "100001");
}

#[tokio::test(flavor = "multi_thread")]
async fn substeps_outside_one_to_a_thousand_are_refused() {
    let mut fx = Fixture::new().await;
    let targets = fx.before.ctrl_targets.clone();
    for n in [0, 1001, u32::MAX] {
        let result = fx.send(ordered(&targets), Some(n)).await;
        let refusal = fx.refused(result, Code::InvalidArgument, "count_out_of_range").await;
        assert_eq!(refusal.meta["field"], "n_substeps");
        assert_eq!(refusal.meta["value"], n.to_string());
        assert_eq!(refusal.meta["range"], "[1, 1000]");
    }
    fx.send(ordered(&targets), Some(1000)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_nul_byte_in_a_name_is_refused_before_it_reaches_mujoco() {
    let mut fx = Fixture::new().await;
    let result = fx.robot.get_jacobian(GetJacobianRequest { name: "tcp\0".into() }).await;
    let refusal = fx.refused(result, Code::InvalidArgument, "invalid_argument").await;
    assert!(refusal.message.contains("NUL"), "{}", refusal.message);
    let result = fx
        .robot
        .tick(TickRequest {
            action: fx.before.ctrl_targets.clone(),
            want_images: true,
            cameras: vec!["agentview\0".into()],
            ..TickRequest::default()
        })
        .await;
    fx.refused(result, Code::NotFound, "unknown_name").await;
    // The twin still answers a good name afterwards.
    let jacobian = fx
        .robot
        .get_jacobian(GetJacobianRequest { name: "tcp".into() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(jacobian.rows, 6);
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_joint_values_are_refused() {
    let mut fx = Fixture::new().await;
    let result = fx
        .robot
        .send_action(SendActionRequest {
            action: None,
            n_substeps: None,
            unit: 0,
        })
        .await;
    let refusal = fx.refused(result, Code::InvalidArgument, "invalid_argument").await;
    assert_eq!(refusal.meta["field"], "action");
    let result = fx
        .robot
        .set_joint_positions(SetJointPositionsRequest {
            positions: Some(JointValues { form: None }),
            hold: false,
        })
        .await;
    let refusal = fx.refused(result, Code::InvalidArgument, "invalid_argument").await;
    assert_eq!(refusal.meta["field"], "positions");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_camera_is_refused_before_the_tick() {
    let mut fx = Fixture::new().await;
    let action = fx.before.ctrl_targets.clone();
    let request = TickRequest {
        action,
        want_images: true,
        cameras: vec!["agentview".into(), "topview".into()],
        ..Default::default()
    };
    let result = fx.robot.tick(request).await;
    let refusal = fx.refused(result, Code::NotFound, "unknown_name").await;
    assert_eq!(refusal.meta["kind"], "camera");
    assert_eq!(refusal.meta["unknown"], "topview");
    assert!(
        refusal.meta["known"].contains("robot0_eye_in_hand"),
        "{:?}",
        refusal.meta
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_images_and_unknown_encodings_are_refused_before_the_tick() {
    let mut fx = Fixture::new().await;
    let action = fx.before.ctrl_targets.clone();
    let request = TickRequest {
        action: action.clone(),
        want_images: true,
        cameras: vec!["agentview".into()],
        width: 5000,
        ..Default::default()
    };
    let result = fx.robot.tick(request).await;
    let refusal = fx.refused(result, Code::InvalidArgument, "image_size").await;
    assert_eq!(refusal.meta["width"], "5000");
    assert_eq!(refusal.meta["height"], "256", "a 0 height takes the default");

    let request = TickRequest {
        action: action.clone(),
        want_images: true,
        cameras: vec!["agentview".into()],
        want_depth: true,
        depth_encoding: 9,
        ..Default::default()
    };
    let result = fx.robot.tick(request).await;
    let refusal = fx.refused(result, Code::InvalidArgument, "invalid_argument").await;
    assert_eq!(refusal.meta["field"], "depth_encoding");
    let request = TickRequest {
        action: action.clone(),
        want_images: true,
        cameras: vec!["agentview".into()],
        color_encoding: 7,
        ..Default::default()
    };
    let result = fx.robot.tick(request).await;
    let refusal = fx.refused(result, Code::InvalidArgument, "invalid_argument").await;
    assert_eq!(refusal.meta["field"], "color_encoding");
    // Images asked for without a camera named (once: every camera) are refused, not guessed.
    let request = TickRequest {
        action,
        want_images: true,
        ..Default::default()
    };
    let result = fx.robot.tick(request).await;
    let refusal = fx.refused(result, Code::InvalidArgument, "invalid_argument").await;
    assert_eq!(refusal.meta["field"], "cameras");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_saved_state_and_empty_name_are_refused() {
    let mut fx = Fixture::new().await;
    fx.robot
        .save_state(SaveStateRequest { name: "kept".into() })
        .await
        .unwrap();
    let result = fx
        .robot
        .load_state(LoadStateRequest {
            name: "never-saved".into(),
        })
        .await;
    let refusal = fx.refused(result, Code::NotFound, "unknown_name").await;
    assert_eq!(refusal.meta["kind"], "saved state");
    assert_eq!(refusal.meta["unknown"], "never-saved");
    assert_eq!(refusal.meta["known"], "kept");

    let result = fx.robot.save_state(SaveStateRequest { name: String::new() }).await;
    let refusal = fx.refused(result, Code::InvalidArgument, "invalid_argument").await;
    assert_eq!(refusal.meta["field"], "name");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_frames_are_refused() {
    let mut fx = Fixture::new().await;
    let result = fx
        .robot
        .forward_kinematics(ForwardKinematicsRequest {
            name: Some("elbow".into()),
        })
        .await;
    let refusal = fx.refused(result, Code::NotFound, "unknown_name").await;
    assert_eq!(refusal.meta["unknown"], "elbow");
    let result = fx
        .robot
        .get_jacobian(GetJacobianRequest { name: "nowhere".into() })
        .await;
    let refusal = fx.refused(result, Code::NotFound, "unknown_name").await;
    assert!(refusal.meta["known"].contains("gripper"), "{:?}", refusal.meta);
}
