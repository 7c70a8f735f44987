//! End-effector moves and gripper actions of one arm of a pair, named by `arm`: a scripted
//! client lifts both cubes of the pair's task (the left arm the red, the right arm the blue)
//! and each run is judged a success; a move without an arm, or naming an arm a daemon alone does
//! not have, is refused; a named move needs that arm's lease only; in `hil` a move of one arm
//! writes goals to that arm's bus only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::pair::take_lease;
use fakesim_e2e::virtual_arm::{VirtualPairServer, goal_writes};
use fakesim_e2e::{CallMetadata, Conn, TestServer, assert_reason, move_by};
use fakesim_episode::tasks::TaskRef;
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use tonic::Code;

/// The pair suite's task, lift both cubes, in layout `layout`.
fn lift_both(layout: u32) -> ResetTaskRequest {
    ResetTaskRequest {
        suite: Some("pair_tabletop".into()),
        task_index: Some(0),
        init_state_index: Some(layout),
        ..Default::default()
    }
}

/// A `Move` of `arm`'s TCP by `delta` metres.
fn arm_move(arm: &str, [x, y, z]: [f64; 3]) -> MoveRequest {
    MoveRequest {
        arm: arm.into(),
        ..move_by(x, y, z)
    }
}

fn close(arm: &str) -> GripperRequest {
    GripperRequest {
        command: GripperCommand::Close.into(),
        arm: arm.into(),
    }
}

/// The TCP of `arm` now (world frame, m).
async fn tcp_of(robot: &mut RobotServiceClient<Conn>, arm: &str) -> [f64; 3] {
    let state = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    let pose = state.arms.iter().find(|pose| pose.arm == arm).unwrap();
    let p = pose.tcp.as_ref().unwrap().position_m.unwrap();
    [p.x, p.y, p.z]
}

/// Moves `arm`'s TCP to `target` in at most four moves (each may stop at its step cap);
/// returns where the last move left it.
async fn move_to(session: &mut SessionServiceClient<Conn>, arm: &str, mut tcp: [f64; 3], target: [f64; 3]) -> [f64; 3] {
    for _ in 0..4 {
        let delta = std::array::from_fn(|i| target[i] - tcp[i]);
        let out = session.r#move(arm_move(arm, delta)).await.unwrap().into_inner();
        let p = out.state.unwrap().eef_pos_m.unwrap();
        tcp = [p.x, p.y, p.z];
        if out.action.unwrap().stop_reason() != MoveStopReason::StepCap {
            break;
        }
    }
    tcp
}

/// The turn about z that lines the jaws up with a cube at `yaw`: a cube looks the same every
/// quarter turn, so the smallest such turn.
fn jaw_turn(yaw: f64) -> f64 {
    let quarter = std::f64::consts::FRAC_PI_2;
    yaw - quarter * (yaw / quarter).round()
}

/// Each arm above its cube, its jaws turned to the cube's sides, down, closed, lifted; then
/// the run's summary.
async fn scripted_lift_both(server: &TestServer, layout: u32) -> serde_json::Value {
    let conn = server.leased().await.unwrap();
    let (mut session, mut robot) = (SessionServiceClient::new(conn.clone()), RobotServiceClient::new(conn));
    session.reset_task(lift_both(layout)).await.unwrap();
    let cubes = TaskRef {
        suite: "pair_tabletop".into(),
        task_index: 0,
        init_state_index: layout,
    }
    .layout();
    for (arm, cube) in [("left", cubes.cube_red), ("right", cubes.cube_blue)] {
        let start = tcp_of(&mut robot, arm).await;
        move_to(&mut session, arm, start, [cube[0], cube[1], 0.87]).await;
        let turn = MoveRequest {
            delta_xyz: Some(Vec3::default()),
            delta_rpy: Some(Rpy {
                roll_x: 0.0,
                pitch_y: 0.0,
                yaw_z: jaw_turn(cube[2]),
            }),
            arm: arm.into(),
        };
        session.r#move(turn).await.unwrap();
        let turned = tcp_of(&mut robot, arm).await;
        move_to(&mut session, arm, turned, [cube[0], cube[1], 0.818]).await;
        let closed = session.gripper(close(arm)).await.unwrap().into_inner();
        assert_eq!(
            closed.action.unwrap().stop_reason(),
            GripperStopReason::Settled,
            "{arm}"
        );
        session.r#move(arm_move(arm, [0.0, 0.0, 0.08])).await.unwrap();
    }
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    let artifacts = stopped.artifacts.unwrap();
    let journal = std::fs::read_to_string(&artifacts.events).unwrap();
    for arm in ["left", "right"] {
        let named = |kind: &str| {
            journal.lines().any(|line| {
                let line: serde_json::Value = serde_json::from_str(line).unwrap();
                line["kind"] == kind && line["arm"] == arm
            })
        };
        assert!(
            named("move") && named("gripper"),
            "{arm}'s moves and gripper actions journaled"
        );
    }
    serde_json::from_str(&std::fs::read_to_string(artifacts.summary).unwrap()).unwrap()
}

#[tokio::test]
async fn a_scripted_client_lifts_both_cubes_moving_each_arm_by_name() {
    let server = TestServer::start_with(|s| {
        s.pair = true;
        s.image_size = 16;
    })
    .await
    .unwrap();
    // Sim runs in lock-step, so the same script gives the same runs on every machine.
    for layout in [0, 1, 2] {
        let summary = scripted_lift_both(&server, layout).await;
        assert_eq!(summary["success"], true, "layout {layout}: {summary}");
    }
    server.stop().await.unwrap();
}

#[tokio::test]
async fn a_move_names_its_arm_on_a_pair_and_only_on_a_pair() {
    let pair = TestServer::start_with(|s| s.pair = true).await.unwrap();
    let mut session = SessionServiceClient::new(pair.leased().await.unwrap());
    session.reset_task(lift_both(0)).await.unwrap();
    let unnamed = session.r#move(arm_move("", [0.0, 0.0, 0.01])).await.unwrap_err();
    assert_reason(&unnamed, Code::FailedPrecondition, "one_arm_verb");
    assert!(unnamed.message().contains("name the arm"), "{}", unnamed.message());
    let unnamed = session.gripper(close("")).await.unwrap_err();
    assert_reason(&unnamed, Code::FailedPrecondition, "one_arm_verb");
    let middle = session.r#move(arm_move("middle", [0.0, 0.0, 0.01])).await.unwrap_err();
    assert_eq!(middle.code(), Code::InvalidArgument, "{middle:?}");
    // An observation names its arm too, and answers that arm's TCP (the left arm stands at
    // y = +0.2 m, the right at -0.2 m) and wrist camera; the shared view is the same.
    let observe = |arm: &str| GetObservationRequest {
        arm: arm.into(),
        ..Default::default()
    };
    let unnamed = session.get_observation(observe("")).await.unwrap_err();
    assert_reason(&unnamed, Code::FailedPrecondition, "one_arm_verb");
    let mut seen_by = Vec::new();
    for (arm, sign) in [("left", 1.0), ("right", -1.0)] {
        let seen = session.get_observation(observe(arm)).await.unwrap().into_inner();
        let tcp = seen.state.unwrap().eef_pos_m.unwrap();
        assert!(sign * tcp.y > 0.1, "{arm}: {tcp:?}");
        let images = seen.images.unwrap();
        assert!(
            !images.agentview.is_empty() && !images.robot0_eye_in_hand.is_empty(),
            "{arm}"
        );
        seen_by.push(images);
    }
    assert_eq!(seen_by[0].agentview, seen_by[1].agentview);
    assert_ne!(
        seen_by[0].robot0_eye_in_hand, seen_by[1].robot0_eye_in_hand,
        "each arm's own wrist camera"
    );
    pair.stop().await.unwrap();

    let alone = TestServer::start().await.unwrap();
    let mut session = SessionServiceClient::new(alone.leased().await.unwrap());
    session.reset_task(ResetTaskRequest::default()).await.unwrap();
    let named = session.r#move(arm_move("left", [0.0, 0.0, 0.01])).await.unwrap_err();
    assert_eq!(named.code(), Code::InvalidArgument, "{named:?}");
    assert!(named.message().contains("leave arm empty"), "{}", named.message());
    let moved = session
        .r#move(arm_move("", [0.0, 0.0, 0.01]))
        .await
        .unwrap()
        .into_inner();
    assert!(moved.action.unwrap().executed_steps > 0);
    alone.stop().await.unwrap();
}

#[tokio::test]
async fn in_hil_a_move_of_one_arm_writes_goals_to_that_arm_s_bus_only() {
    let pair = VirtualPairServer::start(StartMode::Hil, |_| {}).await.unwrap();
    let conn = pair.server.leased().await.unwrap();
    let (mut session, mut robot) = (SessionServiceClient::new(conn.clone()), RobotServiceClient::new(conn));
    session.reset_task(lift_both(0)).await.unwrap();
    let before = [tcp_of(&mut robot, "left").await, tcp_of(&mut robot, "right").await];
    for bus in &pair.buses {
        bus.servos().clear_write_log();
    }
    let moved = session
        .r#move(arm_move("right", [0.0, 0.0, 0.03]))
        .await
        .unwrap()
        .into_inner();
    assert!(moved.action.unwrap().executed_steps > 0);
    assert!(goal_writes(&pair.buses[1]) > 0, "the right arm was sent no goals");
    assert_eq!(goal_writes(&pair.buses[0]), 0, "a right move wrote to the left arm");
    let after = [tcp_of(&mut robot, "left").await, tcp_of(&mut robot, "right").await];
    assert!(
        after[1][2] > before[1][2] + 0.01,
        "the right TCP rose: {before:?} -> {after:?}"
    );
    let left_shift = (0..3).map(|i| (after[0][i] - before[0][i]).abs()).fold(0.0, f64::max);
    assert!(left_shift < 0.005, "the left TCP moved {left_shift} m");
    pair.server.stop().await.unwrap();
}

/// A session client carrying the lease `lease_id`.
async fn session_with(server: &TestServer, lease_id: &str) -> SessionServiceClient<Conn> {
    let conn = server
        .with_metadata(CallMetadata::lease(lease_id).unwrap())
        .await
        .unwrap();
    SessionServiceClient::new(conn)
}

#[tokio::test]
async fn a_named_move_needs_that_arm_s_lease_only() {
    let server = TestServer::start_with(|s| {
        s.pair = true;
        s.lease_in_sim = true;
    })
    .await
    .unwrap();
    // The episode starts under both arms' lease, which is then let go.
    let both = take_lease(&server, "starter", "").await.unwrap();
    session_with(&server, &both)
        .await
        .reset_task(lift_both(0))
        .await
        .unwrap();
    let mut hw = HardwareServiceClient::new(server.channel().await.unwrap());
    hw.release_lease(ReleaseLeaseRequest { lease_id: both }).await.unwrap();
    let left = take_lease(&server, "left hand", "left").await.unwrap();
    let right = take_lease(&server, "right hand", "right").await.unwrap();
    let (mut left_session, mut right_session) =
        (session_with(&server, &left).await, session_with(&server, &right).await);
    left_session.r#move(arm_move("left", [0.0, 0.0, 0.02])).await.unwrap();
    right_session.gripper(close("right")).await.unwrap();
    let other = left_session
        .r#move(arm_move("right", [0.0, 0.0, 0.02]))
        .await
        .unwrap_err();
    assert_reason(&other, Code::FailedPrecondition, "lease_held");
    assert!(other.message().contains("right hand"), "{}", other.message());
    let other = right_session.gripper(close("left")).await.unwrap_err();
    assert_reason(&other, Code::FailedPrecondition, "lease_held");
    server.stop().await.unwrap();
}
