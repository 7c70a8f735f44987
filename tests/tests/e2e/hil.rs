//! Hardware in the loop against a virtual SO-101 on a pseudo-terminal at 1 Mbaud: mirroring
//! scripted hand motion, episodes in hil with the same stop reasons as in sim, mode switches,
//! the emergency stop, and injected faults ending in the documented safe state.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_arm::Joint;
use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_e2e::{CallMetadata, Conn, TestServer, assert_reason, move_by, named, until_sample};
use fakesim_feetech_arm::mapping::JointMapping;
use fakesim_hil::MAX_TTL_MS;
use fakesim_hil::Mode as StartMode;
use fakesim_proto::errors::error_reason;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use feetech::control_table::TORQUE_ENABLE;
use feetech::protocol::status::ServoError;
use feetech_emu::so101::JointOffset;
use feetech_emu::{EmuConfig, VirtualSo101};
use tokio_stream::StreamExt;
use tonic::Code;
use uom::si::angle::radian;

pub(crate) struct Rig {
    pub(crate) arm: VirtualArmServer,
    /// The control lease the rig's clients carry (mirror and hil need it for motion).
    lease: String,
}

impl Rig {
    /// A rig on a daemon already driving a virtual arm: the lease taken.
    pub(crate) async fn on(arm: VirtualArmServer) -> Rig {
        let lease = acquire(&arm.server, "hil-test", MAX_TTL_MS, false)
            .await
            .unwrap()
            .lease_id;
        Rig { arm, lease }
    }

    /// A connection carrying the rig's lease.
    async fn conn(&self) -> Conn {
        self.leased(&self.lease).await
    }

    /// A connection carrying the lease `lease_id`.
    async fn leased(&self, lease_id: &str) -> Conn {
        let metadata = CallMetadata::lease(lease_id).unwrap();
        self.arm.server.with_metadata(metadata).await.unwrap()
    }

    pub(crate) async fn hardware(&self) -> HardwareServiceClient<Conn> {
        HardwareServiceClient::new(self.conn().await)
    }

    pub(crate) async fn session(&self) -> SessionServiceClient<Conn> {
        SessionServiceClient::new(self.conn().await)
    }

    pub(crate) async fn robot(&self) -> RobotServiceClient<Conn> {
        RobotServiceClient::new(self.conn().await)
    }
}

async fn rig(mode: StartMode) -> Rig {
    rig_on(VirtualSo101::config(), mode).await
}

/// A rig whose virtual bus is `bus`.
async fn rig_on(bus: EmuConfig, mode: StartMode) -> Rig {
    Rig::on(VirtualArmServer::start(bus, mode, |_| {}).await.unwrap()).await
}

/// A hardware client carrying no lease (reads and streams need none).
async fn hardware(server: &TestServer) -> HardwareServiceClient<Conn> {
    HardwareServiceClient::new(server.with_metadata(CallMetadata::none()).await.unwrap())
}

/// Takes the control lease from a client of its own.
async fn acquire(server: &TestServer, holder: &str, ttl_ms: u32, takeover: bool) -> Result<Lease, tonic::Status> {
    let mut hw = HardwareServiceClient::new(server.channel().await.unwrap());
    let request = AcquireLeaseRequest {
        holder: holder.into(),
        ttl_ms,
        takeover,
        ..Default::default()
    };
    Ok(hw.acquire_lease(request).await?.into_inner().lease.unwrap())
}

/// Reads the hardware status once per joint-state sample until `done` holds.
pub(crate) async fn until_status(
    hw: &mut HardwareServiceClient<Conn>,
    limit: usize,
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
    for _ in 0..limit {
        let status = hw
            .get_hardware_status(GetHardwareStatusRequest::default())
            .await
            .unwrap()
            .into_inner();
        if done(&status) {
            return status;
        }
        stream.next().await.unwrap().unwrap();
    }
    panic!("status condition not met within {limit} samples");
}

#[tokio::test]
async fn mirror_follows_scripted_hand_motion_and_refuses_motion() {
    let rig = rig(StartMode::Mirror).await;
    let mut hw = rig.hardware().await;
    let status = hw
        .get_hardware_status(GetHardwareStatusRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.mode(), Mode::Mirror);
    assert!(status.bus_connected);
    assert_eq!(status.servos.len(), 6);
    let mapping = JointMapping::so101()
        .bind(&VirtualSo101::calibration(), &twin_ranges())
        .unwrap();
    // The hand moves the elbow and the wrist roll.
    let servos = rig.arm.bus.servos();
    servos.set_present_position(3, 2600).unwrap();
    servos.set_present_position(5, 1500).unwrap();
    let elbow = mapping.servo_to_twin(Joint::ElbowFlex, 2600).get::<radian>();
    let roll = mapping.servo_to_twin(Joint::WristRoll, 1500).get::<radian>();
    let sample = until_sample(&mut hw, 200, |s| {
        s.reading_seq.is_some()
            && (s.joints[2].twin_rad - elbow).abs() < 1e-3
            && (s.joints[4].twin_rad - roll).abs() < 1e-3
    })
    .await
    .unwrap();
    assert!((sample.joints[2].real_rad.unwrap() - elbow).abs() < 1e-3);
    assert!(elbow.abs() > 0.5, "the scripted motion is a real one: {elbow} rad");

    let mut session = rig.session().await;
    session.reset_task(ResetTaskRequest::default()).await.unwrap();
    assert_reason(
        &session.r#move(move_by(0.0, 0.02, 0.0)).await.unwrap_err(),
        Code::FailedPrecondition,
        "mirror_mode",
    );
    let mut robot = rig.robot().await;
    let action = SendActionRequest {
        action: Some(fakesim_e2e::ordered(&[0.0; 6])),
        n_substeps: None,
        unit: 0,
    };
    assert_reason(
        &robot.send_action(action).await.unwrap_err(),
        Code::FailedPrecondition,
        "mirror_mode",
    );
    session.get_observation(GetObservationRequest::default()).await.unwrap();
    rig.arm.server.stop().await.unwrap();
}

/// A rig started in mirror mode, with an episode running, switched to hil on the arm's pose.
async fn rig_in_hil() -> (
    Rig,
    HardwareServiceClient<Conn>,
    SessionServiceClient<Conn>,
    ResetTaskResponse,
) {
    rig_in_hil_on(VirtualSo101::config()).await
}

/// [`rig_in_hil`] on the virtual bus `bus`.
async fn rig_in_hil_on(
    bus: EmuConfig,
) -> (
    Rig,
    HardwareServiceClient<Conn>,
    SessionServiceClient<Conn>,
    ResetTaskResponse,
) {
    into_hil(rig_on(bus, StartMode::Mirror).await).await
}

/// Starts an episode on `rig` (in mirror) and switches it to hil on the arm's pose.
pub(crate) async fn into_hil(
    rig: Rig,
) -> (
    Rig,
    HardwareServiceClient<Conn>,
    SessionServiceClient<Conn>,
    ResetTaskResponse,
) {
    let mut hw = rig.hardware().await;
    let mut session = rig.session().await;
    let started = session
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap()
        .into_inner();
    hw.set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
        .await
        .unwrap();
    (rig, hw, session, started)
}

fn twin_ranges() -> [fakesim_twin::values::Bounds; 6] {
    fakesim_twin::Sim::load(&fakesim_twin::Scene::Tabletop, 10)
        .unwrap()
        .joint_ranges()
}

pub(crate) fn set_mode(mode: Mode, sync: SyncOption) -> SetModeRequest {
    SetModeRequest {
        mode: mode.into(),
        sync: sync.into(),
        sync_max_speed_rad_s: Some(3.0),
    }
}

/// The stop reasons of a fixed script: a 5 cm move, a move into the table, closing the gripper
/// (a refusal is listed by its reason).
async fn script(conn: Conn) -> Vec<String> {
    let mut session = SessionServiceClient::new(conn);
    let mut reasons = Vec::new();
    let out = session.r#move(move_by(0.0, 0.05, 0.0)).await.unwrap().into_inner();
    reasons.push(format!("{:?}", out.action.unwrap().stop_reason()));
    match session.r#move(move_by(0.0, 0.0, -0.3)).await {
        Ok(out) => {
            let out = out.into_inner();
            assert!(out.state.unwrap().eef_pos_m.unwrap().z > 0.79);
            reasons.push(format!("{:?}", out.action.unwrap().stop_reason()));
        }
        Err(refused) => {
            // The table layer refuses a TCP below the margin; the preview may refuse first, when
            // a jaw pad would reach the table before the TCP does.
            let reason = error_reason(&refused).unwrap_or_default();
            let expected = match reason.as_str() {
                "below_table" => Code::OutOfRange,
                _ => Code::FailedPrecondition,
            };
            assert_eq!(refused.code(), expected, "{refused:?}");
            if reason == "preview_refused" {
                assert!(refused.message().contains("table_contact"), "{refused:?}");
            }
            reasons.push(reason.replace("preview_refused", "below_table"));
        }
    }
    let out = session
        .gripper(GripperRequest {
            command: GripperCommand::Close.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    reasons.push(format!("{:?}", out.action.unwrap().stop_reason()));
    reasons
}

#[tokio::test]
async fn an_episode_in_hil_ends_as_in_sim_but_the_table_layer_refuses_a_move_into_the_table() {
    let sim = TestServer::start_with(|s| s.image_size = 16).await.unwrap();
    sim.session()
        .await
        .unwrap()
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap();
    let in_sim = script(sim.with_metadata(CallMetadata::none()).await.unwrap()).await;
    sim.stop().await.unwrap();

    let rig = rig(StartMode::Sim).await;
    let mut session = rig.session().await;
    let started = session
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap()
        .into_inner();
    let mut hw = rig.hardware().await;
    let refused = hw.set_mode(set_mode(Mode::Hil, SyncOption::None)).await.unwrap_err();
    assert_reason(&refused, Code::FailedPrecondition, "arm_twin_disagree");
    let zero_speed = SetModeRequest {
        sync_max_speed_rad_s: Some(0.0),
        ..set_mode(Mode::Hil, SyncOption::MoveArmToTwin)
    };
    assert_reason(
        &hw.set_mode(zero_speed).await.unwrap_err(),
        Code::InvalidArgument,
        "invalid_argument",
    );
    let crawl = SetModeRequest {
        sync_max_speed_rad_s: Some(1e-6),
        ..set_mode(Mode::Hil, SyncOption::MoveArmToTwin)
    };
    let refused = hw.set_mode(crawl).await.unwrap_err();
    assert!(
        refused.message().contains(" s to move ") && refused.message().contains("at most 30 s"),
        "the refusal names the sync's duration: {}",
        refused.message()
    );
    assert_reason(&refused, Code::InvalidArgument, "invalid_argument");
    let switched = hw
        .set_mode(set_mode(Mode::Hil, SyncOption::MoveArmToTwin))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(switched.previous_mode(), Mode::Sim);
    assert!(switched.max_joint_error_rad > 0.1);
    let in_hil = script(rig.conn().await).await;
    // The table stops the twin in sim; on the real arm the table layer refuses the move.
    assert_eq!(in_sim, ["Reached", "Stalled", "Settled"]);
    assert_eq!(in_hil, ["Reached", "below_table", "Settled"]);
    let mut robot = rig.robot().await;
    assert_reason(
        &robot.step(StepRequest { n_steps: 1 }).await.unwrap_err(),
        Code::FailedPrecondition,
        "sim_only_verb",
    );

    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        info.run.as_deref(),
        Some(started.run.as_str()),
        "the episode survived the switch"
    );
    hw.set_mode(set_mode(Mode::Sim, SyncOption::None)).await.unwrap();
    let out = session.r#move(move_by(0.0, 0.0, 0.05)).await.unwrap().into_inner();
    assert_eq!(
        out.action.unwrap().stop_reason(),
        MoveStopReason::Reached,
        "back in sim mid-episode"
    );
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    let events = std::fs::read_to_string(stopped.artifacts.unwrap().events).unwrap();
    assert_eq!(events.matches("\"kind\":\"mode\"").count(), 2, "{events}");
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn the_emergency_stop_latches_torque_off_until_reset() {
    let (rig, mut hw, mut session, _) = rig_in_hil().await;
    let torque = |id| rig.arm.bus.servos().register(id, &TORQUE_ENABLE).unwrap();
    assert!((1..=6).all(|id| torque(id) == 1), "hil switches torque on");
    let stop = hw
        .emergency_stop(EmergencyStopRequest {
            reason: "hand in the workspace".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(stop.estop_latched && !stop.was_latched);
    assert!((1..=6).all(|id| torque(id) == 0), "torque off on every servo");
    assert_reason(
        &session.r#move(move_by(0.0, 0.01, 0.0)).await.unwrap_err(),
        Code::FailedPrecondition,
        "estop_latched",
    );
    assert_reason(
        &hw.set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
            .await
            .unwrap_err(),
        Code::FailedPrecondition,
        "estop_latched",
    );
    let status = hw
        .get_hardware_status(GetHardwareStatusRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(status.estop_latched);
    assert_eq!(status.estop_reason.as_deref(), Some("hand in the workspace"));
    let reset = hw
        .reset_emergency_stop(ResetEmergencyStopRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(reset.was_latched && !reset.estop_latched);
    hw.set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
        .await
        .unwrap();
    let out = session.r#move(move_by(0.0, 0.02, 0.0)).await.unwrap().into_inner();
    assert_eq!(out.action.unwrap().stop_reason(), MoveStopReason::Reached);
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    let events = std::fs::read_to_string(stopped.artifacts.unwrap().events).unwrap();
    assert!(
        events.contains("estop_latched") && events.contains("estop_reset"),
        "{events}"
    );
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn an_overload_bit_turns_torque_off_and_the_api_keeps_answering() {
    let (rig, mut hw, mut session, _) = rig_in_hil().await;
    rig.arm.bus.servos().update_faults(|f| {
        f.forced_errors.insert(2, ServoError::OVERLOAD);
    });
    let status = until_status(&mut hw, 200, |s| {
        s.servos[1].errors.iter().any(|e| e.eq_ignore_ascii_case("overload"))
    })
    .await;
    assert!(status.safety_events >= 1);
    let torque = until_status(&mut hw, 200, |s| !s.servos[0].torque_enabled).await;
    assert!(!torque.estop_latched, "an overload turns torque off without latching");
    assert!((1..=6).all(|id| rig.arm.bus.servos().register(id, &TORQUE_ENABLE).unwrap() == 0));
    session.get_observation(GetObservationRequest::default()).await.unwrap();
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    let events = std::fs::read_to_string(stopped.artifacts.unwrap().events).unwrap();
    assert!(events.contains("servo_fault"), "{events}");
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn losing_the_port_latches_the_stop_and_keeps_the_journal() {
    let (rig, mut hw, mut session, started) = rig_in_hil().await;
    rig.arm.bus.servos().unplug();
    let status = until_status(&mut hw, 300, |s| s.estop_latched).await;
    assert!(!status.bus_connected);
    let refused = session.r#move(move_by(0.0, 0.01, 0.0)).await.unwrap_err();
    assert_reason(&refused, Code::Unavailable, "bus_unavailable");
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.run.as_deref(), Some(started.run.as_str()));
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    let artifacts = stopped.artifacts.unwrap();
    let events = std::fs::read_to_string(&artifacts.events).unwrap();
    assert!(events.contains("bus_lost") || events.contains("servo_lost"), "{events}");
    assert!(std::path::Path::new(&artifacts.summary).is_file());
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn robot_verbs_drive_the_real_arm_in_hil_through_the_safety_layers() {
    let (rig, mut hw, _session, _) = rig_in_hil().await;
    let mut robot = rig.robot().await;
    let mapping = JointMapping::so101()
        .bind(&VirtualSo101::calibration(), &twin_ranges())
        .unwrap();
    let tick = TickRequest {
        action: vec![0.2, -0.1, 0.3, 0.2, 0.0, 0.4],
        ..TickRequest::default()
    };
    let expected = mapping
        .twin_to_servo(Joint::ShoulderPan, uom::si::f64::Angle::new::<radian>(0.2))
        .unwrap();
    // Torque came on with the switch: goals ramp from the held pose to the target.
    let mut ticks = 0;
    let goal = loop {
        let out = robot.tick(tick.clone()).await.unwrap().into_inner();
        assert_eq!(out.observation.len(), 20);
        let goal = rig
            .arm
            .bus
            .servos()
            .register(1, &feetech::control_table::GOAL_POSITION)
            .unwrap();
        ticks += 1;
        if (goal - expected).abs() <= 1 || ticks == 200 {
            break goal;
        }
    };
    assert!(
        (goal - expected).abs() <= 1,
        "shoulder_pan goal {goal} steps, expected {expected}"
    );
    assert!(ticks > 1, "the first target is ramped to, not jumped to");

    let degrees = SendActionRequest {
        action: Some(fakesim_e2e::named(&[("shoulder_pan", 30.0)])),
        n_substeps: None,
        unit: 0,
    };
    let err = robot.send_action(degrees).await.unwrap_err();
    assert_reason(&err.clone(), Code::OutOfRange, "out_of_range");
    assert!(err.message().contains("radians, not degrees"), "{}", err.message());
    assert_reason(
        &robot
            .load_state(LoadStateRequest { name: "x".into() })
            .await
            .unwrap_err(),
        Code::FailedPrecondition,
        "sim_only_verb",
    );
    let rate = hw
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 0.0,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_reason(&rate, Code::InvalidArgument, "invalid_argument");
    assert!((1..=6).all(|id| rig.arm.bus.servos().register(id, &TORQUE_ENABLE).unwrap() == 1));
    rig.arm.server.stop().await.unwrap();
    assert!(
        (1..=6).all(|id| rig.arm.bus.servos().register(id, &TORQUE_ENABLE).unwrap() == 0),
        "shutdown switches torque off"
    );
}

/// Injects a fault while in hil and checks the documented safe state: the stop latched, the
/// API still answering, the journal naming what happened.
async fn fault_latches_the_stop(inject: impl FnOnce(&feetech_emu::ServoBus), journal_word: &str, listening: &[u8]) {
    let (rig, mut hw, mut session, started) = rig_in_hil().await;
    inject(rig.arm.bus.servos());
    let status = until_status(&mut hw, 300, |s| s.estop_latched).await;
    assert!(status.estop_reason.is_some());
    for &id in listening {
        let torque = rig.arm.bus.servos().register(id, &TORQUE_ENABLE).unwrap();
        assert_eq!(torque, 0, "servo {id} still listens, so its torque is off");
    }
    let refused = session.r#move(move_by(0.0, 0.01, 0.0)).await.unwrap_err();
    assert_reason(&refused, Code::FailedPrecondition, "estop_latched");
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(info.run.as_deref(), Some(started.run.as_str()));
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    let events = std::fs::read_to_string(stopped.artifacts.unwrap().events).unwrap();
    assert!(events.contains(journal_word), "{events}");
    assert!(events.contains("estop_latched"), "{events}");
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn a_silent_servo_latches_the_stop_and_names_the_servo() {
    fault_latches_the_stop(
        |servos| {
            servos.update_faults(|f| {
                f.silent.insert(4);
            })
        },
        "servo_lost",
        &[1, 2, 3, 5, 6],
    )
    .await;
}

#[tokio::test]
async fn corrupted_replies_on_every_read_lose_the_bus_and_latch_the_stop() {
    fault_latches_the_stop(
        |servos| servos.update_faults(|f| f.corrupt_checksum = 1.0),
        "bus_lost",
        &[1, 2, 3, 4, 5, 6],
    )
    .await;
}

#[tokio::test]
async fn reset_in_hil_brings_the_real_arm_home() {
    let (rig, _hw, mut session, _) = rig_in_hil().await;
    session.r#move(move_by(0.0, 0.04, 0.02)).await.unwrap();
    session.stop_episode(StopEpisodeRequest {}).await.unwrap();
    let started = session
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap()
        .into_inner();
    let mapping = JointMapping::so101()
        .bind(&VirtualSo101::calibration(), &twin_ranges())
        .unwrap();
    let home = fakesim_twin::arms::SO101.home;
    for joint in Joint::ALL {
        let goal = rig
            .arm
            .bus
            .servos()
            .register(mapping.servo_id(joint), &feetech::control_table::GOAL_POSITION)
            .unwrap();
        let expected = mapping
            .twin_to_servo(joint, uom::si::f64::Angle::new::<radian>(home[joint.index()]))
            .unwrap();
        assert!(
            (goal - expected).abs() <= 1,
            "{joint:?}: goal {goal} steps, home {expected}"
        );
    }
    let home_tcp = started.state.unwrap().eef_pos_m.unwrap();
    let info = session
        .get_session_info(GetSessionInfoRequest {})
        .await
        .unwrap()
        .into_inner();
    let now = info.state.unwrap().eef_pos_m.unwrap();
    let off = ((now.x - home_tcp.x).powi(2) + (now.y - home_tcp.y).powi(2) + (now.z - home_tcp.z).powi(2)).sqrt();
    assert!(off < 0.01, "the twin, mirroring the arm, is {off} m from the home TCP");
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn the_joint_state_stream_sends_each_reading_once_with_its_arrival_time() {
    let rig = rig(StartMode::Mirror).await;
    let mut hw = hardware(&rig.arm.server).await;
    let mut stream = hw
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 1000.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut last: Option<(u64, f64)> = None;
    let mut readings = 0;
    while readings < 40 {
        let sample = stream.next().await.unwrap().unwrap();
        let (Some(reading), Some(at)) = (sample.reading_seq, sample.reading_elapsed_s) else {
            // No new reading within the period: said so, with no real values.
            assert!(sample.joints.iter().all(|j| j.real_rad.is_none()), "{sample:?}");
            continue;
        };
        readings += 1;
        assert!(
            at <= sample.elapsed_s,
            "the reading arrived after it was sent: {sample:?}"
        );
        assert!(sample.joints.iter().all(|j| j.real_rad.is_some()));
        if let Some((previous, previous_at)) = last {
            assert!(
                reading > previous,
                "reading {reading} after {previous}: sent twice or out of order"
            );
            assert!(at >= previous_at, "arrival times go back: {at} after {previous_at}");
        }
        last = Some((reading, at));
    }
}

#[tokio::test]
async fn without_an_arm_the_stream_carries_no_reading() {
    let server = TestServer::start().await.unwrap();
    let mut hw = hardware(&server).await;
    let mut stream = hw
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 200.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    for _ in 0..3 {
        let sample = stream.next().await.unwrap().unwrap();
        assert_eq!((sample.reading_seq, sample.reading_elapsed_s), (None, None));
        assert!(sample.joints.iter().all(|j| j.real_rad.is_none()));
    }
}

fn goals(rig: &Rig) -> Vec<i32> {
    (1..=6)
        .map(|id| {
            rig.arm
                .bus
                .servos()
                .register(id, &feetech::control_table::GOAL_POSITION)
                .unwrap()
        })
        .collect()
}

#[tokio::test]
async fn without_the_lease_a_client_may_read_and_stop_the_arm_but_not_move_it() {
    let (rig, mut hw, mut session, _) = rig_in_hil().await;
    let mut other_session = SessionServiceClient::new(rig.arm.server.channel().await.unwrap());
    let mut other_robot = rig.arm.server.robot().await.unwrap();
    let mut other_hw = HardwareServiceClient::new(rig.arm.server.channel().await.unwrap());

    let refused = other_session.r#move(move_by(0.0, 0.02, 0.0)).await.unwrap_err();
    assert_reason(&refused.clone(), Code::FailedPrecondition, "lease_held");
    assert!(refused.message().contains("\"hil-test\""), "{}", refused.message());
    assert_eq!(
        fakesim_proto::errors::error_info(&refused).unwrap().metadata["holder"],
        "\"hil-test\""
    );
    let tick = TickRequest {
        action: vec![0.1; 6],
        ..TickRequest::default()
    };
    assert_reason(
        &other_robot.tick(tick).await.unwrap_err(),
        Code::FailedPrecondition,
        "lease_held",
    );
    assert_reason(
        &other_hw
            .set_mode(set_mode(Mode::Mirror, SyncOption::None))
            .await
            .unwrap_err(),
        Code::FailedPrecondition,
        "lease_held",
    );
    let status = other_hw
        .get_hardware_status(GetHardwareStatusRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.lease_holder.as_deref(), Some("hil-test"));
    assert!(status.lease_required && status.lease_expires_in_ms > 0);
    other_session
        .get_observation(GetObservationRequest::default())
        .await
        .unwrap();

    let stop = other_hw
        .emergency_stop(EmergencyStopRequest {
            reason: "bystander".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert!(stop.estop_latched);
    assert!((1..=6).all(|id| rig.arm.bus.servos().register(id, &TORQUE_ENABLE).unwrap() == 0));
    assert_reason(
        &other_hw
            .reset_emergency_stop(ResetEmergencyStopRequest::default())
            .await
            .unwrap_err(),
        Code::FailedPrecondition,
        "lease_held",
    );
    hw.reset_emergency_stop(ResetEmergencyStopRequest::default())
        .await
        .unwrap();
    hw.set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
        .await
        .unwrap();
    session.r#move(move_by(0.0, 0.02, 0.0)).await.unwrap();
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn a_takeover_is_explicit_and_a_lease_left_to_expire_ends_in_a_hold() {
    let (rig, _hw, mut session, started) = rig_in_hil().await;
    session.r#move(move_by(0.0, 0.02, 0.0)).await.unwrap();

    let refused = acquire(&rig.arm.server, "laptop", 1000, false).await.unwrap_err();
    assert_reason(&refused.clone(), Code::FailedPrecondition, "lease_held");
    assert!(refused.message().contains("\"hil-test\""), "{}", refused.message());
    let mut hw = HardwareServiceClient::new(rig.leased("none").await);
    let taken = hw
        .acquire_lease(AcquireLeaseRequest {
            holder: "laptop".into(),
            ttl_ms: 1000,
            takeover: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(taken.previous_holder.as_deref(), Some("hil-test"));
    let laptop = taken.lease.unwrap().lease_id;
    let refused = session.r#move(move_by(0.0, -0.02, 0.0)).await.unwrap_err();
    assert_reason(&refused.clone(), Code::FailedPrecondition, "lease_held");
    assert!(refused.message().contains("\"laptop\""), "{}", refused.message());
    let mut laptop_session = SessionServiceClient::new(rig.leased(&laptop).await);
    laptop_session.r#move(move_by(0.0, -0.02, 0.0)).await.unwrap();

    // The laptop goes quiet: no renewal.
    until_status(&mut hw, 500, |s| s.lease_holder.is_none()).await;
    assert_reason(
        &laptop_session.r#move(move_by(0.0, 0.02, 0.0)).await.unwrap_err(),
        Code::FailedPrecondition,
        "lease_expired",
    );
    assert_reason(
        &SessionServiceClient::new(rig.arm.server.channel().await.unwrap())
            .r#move(move_by(0.0, 0.02, 0.0))
            .await
            .unwrap_err(),
        Code::FailedPrecondition,
        "lease_required",
    );
    // The arm holds: every goal settles on the measured position and then never changes.
    let servos = rig.arm.bus.servos();
    until_status(&mut hw, 300, |_| {
        goals(&rig)
            .iter()
            .zip(1..=6)
            .all(|(goal, id)| (goal - servos.present_position(id).unwrap()).abs() <= 2)
    })
    .await;
    let held = goals(&rig);
    let mut samples = hw
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 100.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    for _ in 0..30 {
        samples.next().await.unwrap().unwrap();
        assert_eq!(goals(&rig), held, "no motion after the lease expired");
    }

    let closer = acquire(&rig.arm.server, "closer", 5000, false).await.unwrap();
    let mut closer_session = SessionServiceClient::new(rig.leased(&closer.lease_id).await);
    closer_session.stop_episode(StopEpisodeRequest {}).await.unwrap();
    hw.release_lease(ReleaseLeaseRequest {
        lease_id: closer.lease_id.clone(),
    })
    .await
    .unwrap();
    let events = rig.arm.server.runs_dir().join(&started.run).join("events.jsonl");
    let lease_events: Vec<String> = fakesim_e2e::journal_lines(&events, "lease", 3)
        .await
        .iter()
        .map(|e| e["lease"]["event"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        lease_events,
        ["lease_taken_over", "lease_expired", "lease_acquired"],
        "journaled during the episode, in order"
    );
    rig.arm.server.stop().await.unwrap();
}

/// The virtual SO-101 with joints resting `offsets` (degrees) off the model's zero and
/// obstacles at `obstacles` (degrees of the model's angle).
pub(crate) fn so101_with(offsets: &[(&str, f64)], obstacles: &[(&str, f64)]) -> EmuConfig {
    let angles = |pairs: &[(&str, f64)]| -> Vec<JointOffset> {
        pairs
            .iter()
            .map(|(label, degrees)| JointOffset {
                label: (*label).to_owned(),
                degrees: *degrees,
            })
            .collect()
    };
    let (offsets, obstacles) = (angles(offsets), angles(obstacles));
    let calibration = VirtualSo101::calibration();
    let mut servos = VirtualSo101::holding(&calibration, &offsets).unwrap();
    VirtualSo101::hinder(&mut servos, &calibration, &offsets, &obstacles, &[]).unwrap();
    EmuConfig::new(servos)
}

/// Asserts the elbow is held: its servo's goal is where it stands, so it no longer pushes.
fn assert_elbow_held(rig: &Rig) {
    let present = rig
        .arm
        .bus
        .servos()
        .register(3, &feetech::control_table::PRESENT_POSITION)
        .unwrap();
    let goal = goals(rig)[2];
    assert!((goal - present).abs() <= 2, "goal {goal} present {present}");
}

#[tokio::test]
async fn the_shadow_holds_an_arm_blocked_by_an_obstacle_and_the_move_ends_stalled() {
    // The elbow cannot pass 6 degrees (0.10 rad); from the arm's resting pose (every joint at
    // 0) a move down bends it past.
    let (rig, mut hw, mut session, started) = rig_in_hil_on(so101_with(&[], &[("elbow_flex", 6.0)])).await;
    let out = session.r#move(move_by(0.0, 0.0, -0.1)).await.unwrap().into_inner();
    let action = out.action.unwrap();
    assert_eq!(action.stop_reason(), MoveStopReason::Stalled, "{action:?}");
    assert_elbow_held(&rig);
    let status = hw
        .get_hardware_status(GetHardwareStatusRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(
        !status.estop_latched,
        "a blocked joint holds the arm, it does not stop it"
    );
    // Safety events reach the journal through a task of their own: wait for the hold's.
    let live = rig.arm.server.runs_dir().join(&started.run).join("events.jsonl");
    let mut safety_lines = 1;
    while !fakesim_e2e::journal_lines(&live, "safety", safety_lines)
        .await
        .iter()
        .any(|line| line["safety"]["event"] == "joint_blocked")
    {
        safety_lines += 1;
    }
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    assert_eq!(stopped.run, started.run);
    let events = std::fs::read_to_string(stopped.artifacts.unwrap().events).unwrap();
    let blocked: Vec<&str> = events.lines().filter(|l| l.contains("joint_blocked")).collect();
    assert!(!blocked.is_empty(), "{events}");
    assert!(
        blocked
            .iter()
            .all(|l| l.contains("elbow_flex blocked at 0.10 rad, load")),
        "{blocked:?}"
    );
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn a_joint_resting_off_the_twins_zero_is_reported_as_calibration_drift() {
    let rig = rig_on(so101_with(&[("wrist_roll", 3.0)], &[]), StartMode::Mirror).await;
    let mut hw = hardware(&rig.arm.server).await;
    let three_degrees = 3f64.to_radians();
    let status = until_status(&mut hw, 500, |s| {
        s.servos.iter().any(|servo| servo.calibration_drift_rad.is_some())
    })
    .await;
    let drifted: Vec<(&str, f64)> = status
        .servos
        .iter()
        .filter_map(|s| s.calibration_drift_rad.map(|d| (s.label.as_str(), d)))
        .collect();
    let [("wrist_roll", offset)] = drifted.as_slice() else {
        panic!("only the wrist roll drifted: {drifted:?}");
    };
    // Within a servo step of the injected 3 degrees.
    let step = std::f64::consts::TAU / 4096.0;
    assert!((offset.abs() - three_degrees).abs() <= step, "{offset}");
    // The stream carries the residual of each reading.
    let sample = until_sample(&mut hw, 50, |s| s.reading_seq.is_some()).await.unwrap();
    let roll = sample.joints.iter().find(|j| j.label == "wrist_roll").unwrap();
    assert!((roll.residual_rad.unwrap() - offset).abs() <= step, "{roll:?}");
    let pan = sample.joints.iter().find(|j| j.label == "shoulder_pan").unwrap();
    assert!(pan.residual_rad.unwrap().abs() <= step, "{pan:?}");
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn send_action_and_tick_say_when_the_shadow_held_a_blocked_arm() {
    // The elbow cannot pass 6 degrees (0.10 rad); each call asks for 0.5 rad.
    let (rig, mut hw, _session, _) = rig_in_hil_on(so101_with(&[], &[("elbow_flex", 6.0)])).await;
    let mut robot = rig.robot().await;
    let mut action = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner()
        .ctrl_targets;
    action[2] = 0.5;
    let tick = TickRequest {
        action,
        ..TickRequest::default()
    };
    let first = robot.tick(tick.clone()).await.unwrap().into_inner();
    assert!(!first.blocked, "the elbow has not reached the obstacle yet");
    // A hil tick returns once its goals are sent: the client paces its ticks, here at the
    // 20 Hz of a joint-state stream.
    let mut clock = hw
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 20.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut ticks = 1;
    while !robot.tick(tick.clone()).await.unwrap().into_inner().blocked {
        ticks += 1;
        assert!(ticks < 100, "no tick reported the blocked elbow");
        clock.next().await.unwrap().unwrap();
    }
    assert_elbow_held(&rig);

    // A later call pushes again and is held again.
    let push = || SendActionRequest {
        action: Some(named(&[("elbow_flex", 0.5)])),
        n_substeps: Some(50),
        unit: JointUnit::Radians.into(),
    };
    let mut calls = 0;
    while !robot.send_action(push()).await.unwrap().into_inner().blocked {
        calls += 1;
        assert!(calls < 40, "no SendAction reported the blocked elbow");
    }
    rig.arm.server.stop().await.unwrap();
}
