//! Every RobotService call on its happy path, through the generated client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::{TestServer, named, ordered};
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::*;
use tonic::transport::Channel;

async fn state(robot: &mut RobotServiceClient<Channel>) -> GetRobotStateResponse {
    robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test(flavor = "multi_thread")]
async fn model_info_describes_joints_actions_rate_cameras_and_observation() {
    let server = TestServer::start_with(|s| s.image_size = 96).await.unwrap();
    let info = server
        .robot()
        .await
        .unwrap()
        .get_model_info(GetModelInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<&str> = info.joints.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5", "6"]);
    let labels: Vec<&str> = info.joints.iter().map(|j| j.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "shoulder_pan",
            "shoulder_lift",
            "elbow_flex",
            "wrist_flex",
            "wrist_roll",
            "gripper"
        ]
    );
    for joint in &info.joints {
        assert_eq!(joint.unit, "rad");
        assert!(joint.range_min < joint.range_max, "{joint:?}");
    }
    assert_eq!(info.action_keys, ids);
    assert!(info.timestep_s > 0.0);
    let rate = 1.0 / (info.timestep_s * f64::from(info.substeps_per_tick));
    assert!((info.control_rate_hz - rate).abs() < 1e-9);
    assert!(info.cameras.contains(&"agentview".to_owned()));
    assert!(info.cameras.contains(&"robot0_eye_in_hand".to_owned()));
    assert_eq!((info.default_image_width, info.default_image_height), (96, 96));
    assert_eq!(info.observation_keys.len(), 20);
    assert_eq!(info.observation_keys.first().unwrap(), "pos.shoulder_pan");
    assert_eq!(info.observation_keys.last().unwrap(), "gripper_opening_m");
}

#[tokio::test(flavor = "multi_thread")]
async fn robot_state_at_start() {
    let server = TestServer::start().await.unwrap();
    let s = state(&mut server.robot().await.unwrap()).await;
    assert_eq!(s.joint_ids, ["1", "2", "3", "4", "5", "6"]);
    assert_eq!((s.positions.len(), s.velocities.len(), s.ctrl_targets.len()), (6, 6, 6));
    assert_eq!((s.time_s, s.physics_steps), (0.0, 0));
    let tcp = s.tcp.unwrap().position_m.unwrap();
    assert!(tcp.z > 0.8, "the TCP is above the table: {tcp:?}");
    assert!(s.gripper_opening_m > 0.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn send_action_by_vector_and_by_name() {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let start = state(&mut robot).await;

    let mut targets = start.ctrl_targets.clone();
    targets[2] += 0.3;
    let sent = robot
        .send_action(SendActionRequest {
            action: Some(ordered(&targets)),
            n_substeps: None,
            unit: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(sent.applied_keys, ["1", "2", "3", "4", "5", "6"]);
    assert_eq!((sent.substeps_run, sent.physics_steps), (1, 1));
    assert_eq!(state(&mut robot).await.ctrl_targets, targets);

    let sent = robot
        .send_action(SendActionRequest {
            action: Some(named(&[("Wrist_Flex", 0.4), ("3", targets[2])])),
            n_substeps: Some(200),
            unit: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(sent.applied_keys, ["3", "4"]);
    assert_eq!((sent.substeps_run, sent.physics_steps), (200, 201));
    assert!((sent.time_s - 201.0 * 0.005).abs() < 1e-9);
    let after = state(&mut robot).await;
    assert_eq!(after.ctrl_targets[3], 0.4);
    assert!(
        (after.positions[2] - targets[2]).abs() < (start.positions[2] - targets[2]).abs(),
        "the elbow moved toward its target"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn step_advances_by_n_and_accepts_zero_and_the_cap() {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let step = |n| StepRequest { n_steps: n };
    assert_eq!(robot.step(step(0)).await.unwrap().into_inner().physics_steps, 0);
    let stepped = robot.step(step(40)).await.unwrap().into_inner();
    assert_eq!(stepped.physics_steps, 40);
    assert!((stepped.time_s - 0.2).abs() < 1e-9);
    assert_eq!(
        robot.step(step(100_000)).await.unwrap().into_inner().physics_steps,
        100_040
    );
    assert_eq!(state(&mut robot).await.physics_steps, 100_040);
}

#[tokio::test(flavor = "multi_thread")]
async fn set_joint_positions_with_and_without_hold() {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let held = robot
        .set_joint_positions(SetJointPositionsRequest {
            positions: Some(named(&[("elbow_flex", 0.6), ("2", -0.3)])),
            hold: true,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(held.written_joints, ["2", "3"]);
    assert_eq!(held.setpoints_moved, ["2", "3"]);
    assert!(held.pulled_back_joints.is_empty());
    let s = state(&mut robot).await;
    assert_eq!((s.positions[1], s.positions[2]), (-0.3, 0.6));
    assert_eq!((s.ctrl_targets[1], s.ctrl_targets[2]), (-0.3, 0.6));

    let loose = robot
        .set_joint_positions(SetJointPositionsRequest {
            positions: Some(named(&[("wrist_roll", 0.5)])),
            hold: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(loose.written_joints, ["5"]);
    assert_eq!(loose.pulled_back_joints, ["5"]);
    assert!(loose.setpoints_moved.is_empty());
    let s2 = state(&mut robot).await;
    assert_eq!(s2.positions[4], 0.5);
    assert_eq!(s2.ctrl_targets[4], s.ctrl_targets[4], "without hold the setpoint stays");
}

#[tokio::test(flavor = "multi_thread")]
async fn set_joint_velocities_writes_qvel() {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let written = robot
        .set_joint_velocities(SetJointVelocitiesRequest {
            velocities: Some(named(&[("1", 0.5), ("so101/gripper", -0.25)])),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(written.written_joints, ["1", "6"]);
    let s = state(&mut robot).await;
    assert_eq!((s.velocities[0], s.velocities[5]), (0.5, -0.25));
    let all = robot
        .set_joint_velocities(SetJointVelocitiesRequest {
            velocities: Some(ordered(&[0.0; 6])),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(all.written_joints.len(), 6);
    assert_eq!(state(&mut robot).await.velocities, [0.0; 6]);
}

#[tokio::test(flavor = "multi_thread")]
async fn forward_kinematics_of_every_frame_and_of_the_tcp() {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let all = robot
        .forward_kinematics(ForwardKinematicsRequest { name: None })
        .await
        .unwrap()
        .into_inner()
        .frames;
    assert!(
        all.iter()
            .any(|f| f.name == "cube_red" && f.kind == FrameKind::Body as i32)
    );
    assert!(all.iter().any(|f| f.name == "tcp" && f.kind == FrameKind::Site as i32));
    let tcp = robot
        .forward_kinematics(ForwardKinematicsRequest {
            name: Some("tcp".into()),
        })
        .await
        .unwrap()
        .into_inner()
        .frames;
    assert_eq!(tcp.len(), 1);
    assert_eq!(tcp[0].pose, state(&mut robot).await.tcp);
}

#[tokio::test(flavor = "multi_thread")]
async fn jacobian_has_six_rows_and_one_column_per_dof() {
    let server = TestServer::start().await.unwrap();
    let jac = server
        .robot()
        .await
        .unwrap()
        .get_jacobian(GetJacobianRequest { name: "tcp".into() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(jac.rows, 6);
    assert_eq!(jac.cols as usize, jac.dof_joint_names.len());
    assert_eq!(jac.data.len(), 6 * jac.cols as usize);
    for id in ["1", "2", "3", "4", "5", "6"] {
        assert!(
            jac.dof_joint_names.iter().any(|n| n == id),
            "{id} not in {:?}",
            jac.dof_joint_names
        );
    }
    let pan = jac.dof_joint_names.iter().position(|n| n == "1").unwrap();
    let column_norm: f64 = (0..3)
        .map(|row| jac.data[row * jac.cols as usize + pan].powi(2))
        .sum::<f64>()
        .sqrt();
    assert!(column_norm > 0.01, "turning the pan moves the TCP");
}

#[tokio::test(flavor = "multi_thread")]
async fn contacts_list_the_objects_resting_on_the_table() {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    robot.step(StepRequest { n_steps: 200 }).await.unwrap();
    let contacts = robot
        .get_contacts(GetContactsRequest {})
        .await
        .unwrap()
        .into_inner()
        .contacts;
    assert!(contacts.iter().any(|c| c.active), "{contacts:?}");
    for contact in &contacts {
        assert!(!contact.geom1.is_empty() && !contact.geom2.is_empty());
        assert!(contact.dist_m.is_finite());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn save_and_load_state_restore_everything() {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    robot.step(StepRequest { n_steps: 30 }).await.unwrap();
    let saved = robot
        .save_state(SaveStateRequest { name: "before".into() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((saved.name.as_str(), saved.physics_steps), ("before", 30));
    let before = state(&mut robot).await;

    robot
        .set_joint_positions(SetJointPositionsRequest {
            positions: Some(named(&[("1", 0.7)])),
            hold: true,
        })
        .await
        .unwrap();
    robot.step(StepRequest { n_steps: 50 }).await.unwrap();
    assert_ne!(state(&mut robot).await, before);

    let loaded = robot
        .load_state(LoadStateRequest { name: "before".into() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((loaded.name.as_str(), loaded.physics_steps), ("before", 30));
    assert_eq!(loaded.time_s, before.time_s);
    let after = state(&mut robot).await;
    assert_eq!(after.positions, before.positions);
    assert_eq!(after.velocities, before.velocities);
    assert_eq!(after.ctrl_targets, before.ctrl_targets);
    assert_eq!(
        (after.time_s, after.physics_steps),
        (before.time_s, before.physics_steps)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tick_runs_one_control_tick_and_returns_the_observation() {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let info = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    let mut action = state(&mut robot).await.ctrl_targets;
    action[1] -= 0.2;
    let tick = robot
        .tick(TickRequest {
            action: action.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(tick.physics_steps, u64::from(info.substeps_per_tick));
    assert!(tick.frames.is_empty());
    assert_eq!(tick.observation.len(), info.observation_keys.len());
    let s = state(&mut robot).await;
    assert_eq!(s.ctrl_targets, action);
    assert_eq!(tick.observation[0..6], s.positions[..]);
    assert_eq!(tick.observation[6..12], s.velocities[..]);
    let tcp = s.tcp.unwrap();
    let (p, q) = (tcp.position_m.unwrap(), tcp.orientation.unwrap());
    assert_eq!(tick.observation[12..19], [p.x, p.y, p.z, q.w, q.x, q.y, q.z]);
    assert_eq!(tick.observation[19], s.gripper_opening_m);
}
