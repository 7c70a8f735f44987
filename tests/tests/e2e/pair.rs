//! Two arms at once: a pair in the twin alone, and two virtual SO-101 followers on their own
//! buses: each mirrored, a hil episode of the pair's task, a chunk swinging one arm into the
//! other refused by the preview naming both links, and the emergency stop of one arm or both.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_arm::Joint;
use fakesim_e2e::virtual_arm::{VirtualPairServer, goal_writes};
use fakesim_e2e::{CallMetadata, Conn, TestServer, assert_reason, named};
use fakesim_feetech_arm::mapping::JointMapping;
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use feetech_emu::VirtualSo101;
use tokio_stream::StreamExt;
use tonic::Code;
use uom::si::angle::radian;

fn tick(action: Vec<f64>) -> TickRequest {
    TickRequest {
        action,
        ..Default::default()
    }
}

/// The pair suite's task: lift both cubes.
fn lift_both() -> ResetTaskRequest {
    ResetTaskRequest {
        suite: Some("pair_tabletop".into()),
        task_index: Some(0),
        ..Default::default()
    }
}

/// Both arms' targets: the left's six, then the right's.
fn both(left: [f64; 6], right: [f64; 6]) -> Vec<f64> {
    left.into_iter().chain(right).collect()
}

/// One arm's block of a pair's joint values.
fn side(values: &[f64], index: usize) -> &[f64] {
    &values[6 * index..6 * index + 6]
}

/// The state now, and each arm's block of `values_of` it (the left's, the right's).
async fn state_by_arm(
    robot: &mut RobotServiceClient<Conn>,
    values_of: fn(&GetRobotStateResponse) -> &[f64],
) -> (GetRobotStateResponse, [f64; 6], [f64; 6]) {
    let state = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    let (mut left, mut right) = ([0.0; 6], [0.0; 6]);
    left.copy_from_slice(side(values_of(&state), 0));
    right.copy_from_slice(side(values_of(&state), 1));
    (state, left, right)
}

#[tokio::test]
async fn a_pair_in_the_twin_names_both_arms_and_ticks_them_in_one_physics_step() {
    let server = TestServer::start_with(|s| {
        s.pair = true;
        s.image_size = 16;
    })
    .await
    .unwrap();
    let mut robot = RobotServiceClient::new(server.leased().await.unwrap());
    let info = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    assert_eq!(info.arms, ["left", "right"]);
    assert_eq!(info.action_keys.len(), 12);
    assert_eq!(
        (info.action_keys[0].as_str(), info.action_keys[6].as_str()),
        ("left/1", "right/1")
    );
    assert_eq!(info.joint_names[11], "right/6 (right/gripper)");
    assert_eq!(info.observation_keys.len(), 40);
    assert_eq!(info.observation_keys[20], "right/pos.shoulder_pan");
    assert!(
        info.cameras.contains(&"right/robot0_eye_in_hand".to_owned()),
        "{:?}",
        info.cameras
    );
    let mut session = server.session().await.unwrap();
    let listing = session
        .list_tasks(ListTasksRequest {
            suite: Some("pair_tabletop".into()),
        })
        .await
        .unwrap()
        .into_inner();
    let suites: Vec<&str> = listing.suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(suites, ["so101_tabletop", "pair_tabletop"]);
    assert_eq!(listing.tasks[0].name, "lift_both");

    let (start, mut left, mut right) = state_by_arm(&mut robot, |s| &s.ctrl_targets).await;
    assert_eq!(start.joint_ids.len(), 12);
    assert_eq!(start.arms.len(), 2);
    left[0] = 0.4;
    right[0] = -0.3;
    let period = info.control_period_s;
    let mut last = None;
    for _ in 0..40 {
        last = Some(robot.tick(tick(both(left, right))).await.unwrap().into_inner());
    }
    let last = last.unwrap();
    // 40 ticks of both arms are 40 periods of twin time: the arms share each physics step.
    assert!(
        (last.time_s - start.time_s - 40.0 * period).abs() < 1e-9,
        "{} {}",
        last.time_s,
        start.time_s
    );
    assert_eq!(last.observation.len(), 40);
    let (left_pan, right_pan) = (last.observation[0], last.observation[20]);
    assert!((left_pan - 0.4).abs() < 0.02, "left pan {left_pan}");
    assert!((right_pan + 0.3).abs() < 0.02, "right pan {right_pan}");

    // Six targets are one arm's: a pair's tick needs both, and says in which order.
    let refused = robot.tick(tick(left.to_vec())).await.unwrap_err();
    assert_reason(&refused, Code::InvalidArgument, "wrong_length");
    assert!(
        refused.message().contains("left/1 (left/shoulder_pan)"),
        "{}",
        refused.message()
    );
    assert!(
        refused.message().contains("right/6 (right/gripper)"),
        "{}",
        refused.message()
    );
    // Joint writes name each joint under its side, and change nothing unless all are good.
    let set = |pairs: &[(&str, f64)]| SetJointPositionsRequest {
        positions: Some(named(pairs)),
        hold: true,
    };
    let written = robot
        .set_joint_positions(set(&[("left/shoulder_pan", 0.3), ("RIGHT/1", -0.2)]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(written.written_joints, ["left/1", "right/1"]);
    let state = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!((state.positions[0], state.positions[6]), (0.3, -0.2));
    let bare = robot
        .set_joint_positions(set(&[("shoulder_pan", 0.1)]))
        .await
        .unwrap_err();
    assert_reason(&bare, Code::NotFound, "unknown_name");
    assert!(
        bare.message().contains("left/1 (left/shoulder_pan)"),
        "{}",
        bare.message()
    );
    let half = robot
        .set_joint_positions(set(&[("left/shoulder_pan", 0.1), ("right/shoulder_pan", 99.0)]))
        .await
        .unwrap_err();
    assert_reason(&half, Code::OutOfRange, "out_of_range");
    let state = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(state.positions[0], 0.3, "a refused write moved the left arm");
    // A verb that drives one arm's joints is refused, naming what to use instead (a move
    // names its arm: pair_moves).
    let sent = robot
        .send_action(SendActionRequest {
            action: Some(named(&[("left/shoulder_pan", 0.1)])),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_reason(&sent, Code::FailedPrecondition, "one_arm_verb");
    assert!(sent.message().contains("TickChunk"), "{}", sent.message());
    server.stop().await.unwrap();
}

/// Takes the lease of `arm` (empty: both) as `holder`, on a connection of its own.
pub(crate) async fn take_lease(server: &TestServer, holder: &str, arm: &str) -> Result<String, tonic::Status> {
    let mut hw = HardwareServiceClient::new(server.channel().await.unwrap());
    let request = AcquireLeaseRequest {
        holder: holder.into(),
        ttl_ms: fakesim_hil::MAX_TTL_MS,
        takeover: false,
        arm: arm.into(),
    };
    Ok(hw.acquire_lease(request).await?.into_inner().lease.unwrap().lease_id)
}

/// A robot client carrying the lease `lease_id`.
async fn robot_with(server: &TestServer, lease_id: &str) -> RobotServiceClient<Conn> {
    RobotServiceClient::new(
        server
            .with_metadata(CallMetadata::lease(lease_id).unwrap())
            .await
            .unwrap(),
    )
}

#[tokio::test]
async fn each_arm_of_a_pair_has_its_own_lease_and_a_one_arm_tick_moves_that_arm_only() {
    let server = TestServer::start_with(|s| {
        s.pair = true;
        s.lease_in_sim = true;
    })
    .await
    .unwrap();
    let left_lease = take_lease(&server, "left teleop", "left").await.unwrap();
    let right_lease = take_lease(&server, "right teleop", "right").await.unwrap();
    let taken = take_lease(&server, "third", "left").await.unwrap_err();
    assert_reason(&taken, Code::FailedPrecondition, "lease_held");
    assert!(taken.message().contains("left teleop"), "{}", taken.message());
    let every = take_lease(&server, "third", "").await.unwrap_err();
    assert_reason(&every, Code::FailedPrecondition, "lease_held");
    let mut hw = HardwareServiceClient::new(server.channel().await.unwrap());
    let status = hw
        .get_hardware_status(GetHardwareStatusRequest { arm: "right".into() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.lease_holder.as_deref(), Some("right teleop"));

    let (mut left_robot, mut right_robot) = (
        robot_with(&server, &left_lease).await,
        robot_with(&server, &right_lease).await,
    );
    let (start, left, right) = state_by_arm(&mut left_robot, |s| &s.ctrl_targets).await;
    let one_arm = |arm: &str, mut targets: [f64; 6], pan: f64| {
        targets[0] = pan;
        TickRequest {
            action: targets.to_vec(),
            arm: arm.into(),
            ..Default::default()
        }
    };
    // Each client ticks its own arm; the other arm keeps its goals.
    for _ in 0..30 {
        left_robot.tick(one_arm("left", left, 0.4)).await.unwrap();
        right_robot.tick(one_arm("right", right, -0.3)).await.unwrap();
    }
    let (_, left_now, right_now) = state_by_arm(&mut left_robot, |s| &s.positions).await;
    assert!(
        (left_now[0] - 0.4).abs() < 0.02 && (right_now[0] + 0.3).abs() < 0.02,
        "{left_now:?} {right_now:?}"
    );
    let (_, left_goals, right_goals) = state_by_arm(&mut left_robot, |s| &s.ctrl_targets).await;
    assert_eq!((left_goals[0], right_goals[0]), (0.4, -0.3));
    assert_eq!(
        left_goals[1..],
        start.ctrl_targets[1..6],
        "the left arm's other joints kept their goals"
    );

    // A client holding one arm's lease may not move the other, nor both.
    let other = left_robot.tick(one_arm("right", right, 0.0)).await.unwrap_err();
    assert_reason(&other, Code::FailedPrecondition, "lease_held");
    assert!(other.message().contains("right teleop"), "{}", other.message());
    let pair_tick = left_robot.tick(tick(both(left, right))).await.unwrap_err();
    assert_reason(&pair_tick, Code::FailedPrecondition, "lease_held");
    // A one-arm tick holds that arm's six values; on one arm, naming an arm is refused.
    let twelve = left_robot
        .tick(TickRequest {
            arm: "left".into(),
            ..tick(both(left, right))
        })
        .await
        .unwrap_err();
    assert_reason(&twelve, Code::InvalidArgument, "wrong_length");
    server.stop().await.unwrap();
    let single = TestServer::start().await.unwrap();
    let mut robot = single.robot().await.unwrap();
    let named = robot
        .tick(TickRequest {
            arm: "left".into(),
            ..tick(vec![0.0; 6])
        })
        .await
        .unwrap_err();
    assert_eq!(named.code(), Code::InvalidArgument, "{named:?}");
    single.stop().await.unwrap();
}

#[tokio::test]
async fn the_pair_task_is_refused_on_one_arm() {
    let server = TestServer::start().await.unwrap();
    let mut session = server.session().await.unwrap();
    let refused = session.reset_task(lift_both()).await.unwrap_err();
    assert_reason(&refused, Code::FailedPrecondition, "needs_pair");
    assert!(refused.message().contains("--pair"), "{}", refused.message());
    let listing = session
        .list_tasks(ListTasksRequest { suite: None })
        .await
        .unwrap()
        .into_inner();
    let suites: Vec<&str> = listing.suites.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(suites, ["so101_tabletop"], "one arm lists its own suite only");
    server.stop().await.unwrap();
}

/// A hardware client on its own connection, carrying the server's lease.
async fn hardware(server: &TestServer) -> HardwareServiceClient<Conn> {
    HardwareServiceClient::new(server.leased().await.unwrap())
}

#[tokio::test]
async fn mirror_follows_each_arm_of_the_pair_on_its_own_bus() {
    let pair = VirtualPairServer::start(StartMode::Mirror, |_| {}).await.unwrap();
    let mut hw = hardware(&pair.server).await;
    let mapping = JointMapping::so101()
        .bind(&VirtualSo101::calibration(), &twin_ranges())
        .unwrap();
    // Hands move each arm's elbow, to different places.
    for (bus, steps) in pair.buses.iter().zip([2600, 1500]) {
        bus.servos().set_present_position(3, steps).unwrap();
    }
    for (arm, steps) in [("left", 2600), ("right", 1500)] {
        let elbow = mapping.servo_to_twin(Joint::ElbowFlex, steps).get::<radian>();
        assert!(elbow.abs() > 0.5, "the hand's motion is a real one: {elbow} rad");
        let mut stream = hw
            .stream_joint_states(StreamJointStatesRequest {
                rate_hz: 100.0,
                arm: arm.into(),
            })
            .await
            .unwrap()
            .into_inner();
        let mut mirrored = false;
        for _ in 0..200 {
            let sample = stream.next().await.unwrap().unwrap();
            assert_eq!(sample.joints[2].twin_joint, format!("{arm}/3"));
            if sample.reading_seq.is_some() && (sample.joints[2].twin_rad - elbow).abs() < 1e-3 {
                mirrored = true;
                break;
            }
        }
        assert!(mirrored, "the {arm} arm's elbow never reached {elbow} rad in the twin");
    }
    let mut robot = RobotServiceClient::new(pair.server.leased().await.unwrap());
    let state = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    let left_elbow = mapping.servo_to_twin(Joint::ElbowFlex, 2600).get::<radian>();
    let right_elbow = mapping.servo_to_twin(Joint::ElbowFlex, 1500).get::<radian>();
    assert!((state.positions[2] - left_elbow).abs() < 1e-3, "{:?}", state.positions);
    assert!((state.positions[8] - right_elbow).abs() < 1e-3, "{:?}", state.positions);
    pair.server.stop().await.unwrap();
}

/// Ticks both arms towards `left` and `right`, one tick per sample of the right arm's
/// joint-state stream, until both arms' measured joints are within `tolerance` of their
/// targets; returns the last state.
async fn drive_until_there(
    robot: &mut RobotServiceClient<Conn>,
    hw: &mut HardwareServiceClient<Conn>,
    left: [f64; 6],
    right: [f64; 6],
    tolerance: f64,
) -> GetRobotStateResponse {
    let mut stream = hw
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 50.0,
            arm: "right".into(),
        })
        .await
        .unwrap()
        .into_inner();
    for _ in 0..500 {
        robot.tick(tick(both(left, right))).await.unwrap();
        stream.next().await.unwrap().unwrap();
        let state = robot
            .get_robot_state(GetRobotStateRequest::default())
            .await
            .unwrap()
            .into_inner();
        let targets = both(left, right);
        let off = state
            .positions
            .iter()
            .zip(&targets)
            .map(|(p, t)| (p - t).abs())
            .fold(0.0, f64::max);
        if off < tolerance {
            return state;
        }
    }
    panic!("the arms never reached {left:?} / {right:?}");
}

#[tokio::test]
async fn a_hil_episode_of_the_pair_task_drives_both_arms_and_is_journaled() {
    let pair = VirtualPairServer::start(StartMode::Hil, |_| {}).await.unwrap();
    let conn = pair.server.leased().await.unwrap();
    let (mut robot, mut hw) = (RobotServiceClient::new(conn.clone()), hardware(&pair.server).await);
    let mut session = SessionServiceClient::new(conn);
    for bus in &pair.buses {
        bus.servos().clear_write_log();
    }
    let started = session.reset_task(lift_both()).await.unwrap().into_inner();
    assert_eq!(started.task.as_ref().unwrap().name, "lift_both");
    for (arm, bus) in ["left", "right"].iter().zip(&pair.buses) {
        assert!(goal_writes(bus) > 0, "the {arm} arm was not sent home");
    }
    let (home, mut left, mut right) = state_by_arm(&mut robot, |s| &s.positions).await;
    left[0] += 0.15;
    right[0] -= 0.15;
    left[5] = 0.2;
    let state = drive_until_there(&mut robot, &mut hw, left, right, 0.03).await;
    assert!(side(&state.positions, 0)[0] > side(&home.positions, 0)[0] + 0.1);
    assert!(side(&state.positions, 1)[0] < side(&home.positions, 1)[0] - 0.1);
    // A tick of the left arm alone sends nothing to the right.
    pair.buses[1].servos().clear_write_log();
    let mut only_left = left;
    only_left[0] -= 0.05;
    robot
        .tick(TickRequest {
            action: only_left.to_vec(),
            arm: "left".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(goal_writes(&pair.buses[1]), 0, "a left tick wrote to the right arm");
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    assert_eq!(stopped.run, started.run);
    let artifacts = stopped.artifacts.unwrap();
    assert!(std::path::Path::new(&artifacts.summary).is_file(), "{artifacts:?}");
    let journal = std::fs::read_to_string(&artifacts.events).unwrap();
    let ticks: Vec<serde_json::Value> = journal
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|line: &serde_json::Value| line["kind"] == "robot_call" && line["call"] == "tick")
        .collect();
    assert!(!ticks.is_empty(), "no tick journaled");
    for line in &ticks {
        let action = line.pointer("/request/action").and_then(|a| a.as_array());
        assert_eq!(action.map(Vec::len), Some(12), "{line}");
    }
    pair.server.stop().await.unwrap();
}

#[tokio::test]
async fn a_chunk_swinging_one_arm_into_the_other_is_refused_by_the_preview_naming_both_links() {
    let pair = VirtualPairServer::start(StartMode::Hil, |_| {}).await.unwrap();
    let conn = pair.server.leased().await.unwrap();
    let (mut robot, mut hw) = (RobotServiceClient::new(conn), hardware(&pair.server).await);
    let (_, left, mut right) = state_by_arm(&mut robot, |s| &s.positions).await;
    // The right arm turns in over the middle of the table (a negative pan turns it to +y).
    right[0] = -1.0;
    drive_until_there(&mut robot, &mut hw, left, right, 0.05).await;
    // The left arm swings towards it: its pan to +1.0 over the chunk.
    let ticks = (1..=60)
        .map(|k| {
            let mut to = left;
            to[0] = f64::from(k) / 60.0 * 1.0;
            tick(both(to, right))
        })
        .collect();
    let chunk = robot.tick_chunk(TickChunkRequest { ticks }).await.unwrap().into_inner();
    let stop = chunk.stopped.expect("the chunk ran into the other arm unrefused");
    assert_eq!(stop.reason, "preview_refused", "{stop:?}");
    assert!(stop.message.contains("arm_contact"), "{}", stop.message);
    assert!(
        stop.message.contains("left/") && stop.message.contains("right/"),
        "{}",
        stop.message
    );
    let after = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(
        after.positions[0] < 0.9,
        "the left arm went on into the right: {:?}",
        after.positions
    );
    pair.server.stop().await.unwrap();
}

#[tokio::test]
async fn an_emergency_stop_of_one_arm_latches_that_arm_and_one_without_an_arm_latches_both() {
    let pair = VirtualPairServer::start(StartMode::Hil, |_| {}).await.unwrap();
    let conn = pair.server.leased().await.unwrap();
    let (mut robot, mut hw) = (RobotServiceClient::new(conn), hardware(&pair.server).await);
    let latched = |status: GetHardwareStatusResponse| (status.arm.clone(), status.estop_latched);
    async fn status(hw: &mut HardwareServiceClient<Conn>, arm: &str) -> GetHardwareStatusResponse {
        hw.get_hardware_status(GetHardwareStatusRequest { arm: arm.into() })
            .await
            .unwrap()
            .into_inner()
    }
    hw.emergency_stop(EmergencyStopRequest {
        reason: "left gripper jammed".into(),
        arm: "left".into(),
    })
    .await
    .unwrap();
    assert_eq!(latched(status(&mut hw, "left").await), ("left".to_owned(), true));
    assert_eq!(latched(status(&mut hw, "right").await), ("right".to_owned(), false));
    let right_torque = |id| {
        pair.buses[1]
            .servos()
            .register(id, &feetech::control_table::TORQUE_ENABLE)
            .unwrap()
    };
    assert!((1..=6).all(|id| right_torque(id) == 1), "the right arm lost torque");
    let state = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    let refused = robot.tick(tick(state.positions.clone())).await.unwrap_err();
    assert_reason(&refused, Code::FailedPrecondition, "estop_latched");
    robot
        .tick(TickRequest {
            action: side(&state.positions, 1).to_vec(),
            arm: "right".into(),
            ..Default::default()
        })
        .await
        .expect("the right arm, not stopped, still ticks alone");
    // An unknown arm is refused, naming the sides.
    let unknown = hw
        .emergency_stop(EmergencyStopRequest {
            reason: String::new(),
            arm: "middle".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::InvalidArgument);
    assert!(unknown.message().contains("left, right"), "{}", unknown.message());
    // Without an arm, both stop; resetting the left leaves the right latched.
    hw.emergency_stop(EmergencyStopRequest::default()).await.unwrap();
    assert!(status(&mut hw, "right").await.estop_latched);
    hw.reset_emergency_stop(ResetEmergencyStopRequest { arm: "left".into() })
        .await
        .unwrap();
    assert!(!status(&mut hw, "left").await.estop_latched);
    assert!(status(&mut hw, "right").await.estop_latched);
    hw.reset_emergency_stop(ResetEmergencyStopRequest::default())
        .await
        .unwrap();
    assert!(!status(&mut hw, "right").await.estop_latched);
    pair.server.stop().await.unwrap();
}

fn twin_ranges() -> [fakesim_twin::values::Bounds; 6] {
    fakesim_twin::Sim::load(&fakesim_twin::Scene::Tabletop, 10)
        .unwrap()
        .joint_ranges()
}
