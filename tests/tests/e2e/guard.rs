//! The guard on the virtual SO-101 in `hil`, through the daemon: an arm calibrated narrower
//! than the model still runs whole episodes (the home pose lies inside its range), and mode
//! switches ride through a noisy bus as the mirror loop does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_e2e::{CallMetadata, Conn};
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use feetech::calibration::Calibration;
use feetech::control_table::GOAL_POSITION;
use feetech_emu::{EmuConfig, VirtualSo101};

/// Servo steps in 87.9 degrees.
const NARROW_HALF_RANGE_STEPS: i32 = 1000;

/// A connection carrying a fresh lease of the server's.
async fn leased(arm: &VirtualArmServer) -> Conn {
    let mut hardware = HardwareServiceClient::new(arm.server.channel().await.unwrap());
    let request = AcquireLeaseRequest {
        holder: "guard test".into(),
        ttl_ms: 60_000,
        takeover: false,
        ..Default::default()
    };
    let lease = hardware
        .acquire_lease(request)
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap();
    arm.server
        .with_metadata(CallMetadata::lease(&lease.lease_id).unwrap())
        .await
        .unwrap()
}

/// The virtual calibration with wrist_flex narrowed to ±87.9 degrees around its middle.
fn narrow_wrist() -> Calibration {
    let mut calibration = VirtualSo101::calibration();
    let wrist = calibration.motors.get_mut("wrist_flex").unwrap();
    let middle = (wrist.range_min + wrist.range_max) / 2;
    wrist.range_min = middle - NARROW_HALF_RANGE_STEPS;
    wrist.range_max = middle + NARROW_HALF_RANGE_STEPS;
    calibration
}

#[tokio::test]
async fn an_arm_calibrated_narrower_than_the_home_pose_runs_a_whole_hil_episode() {
    let calibration = narrow_wrist();
    let servos = VirtualSo101::holding(&calibration, &[]).unwrap();
    let arm = VirtualArmServer::start_calibrated(EmuConfig::new(servos), &calibration, StartMode::Hil, |_| {})
        .await
        .unwrap();
    let conn = leased(&arm).await;
    let info = RobotServiceClient::new(conn.clone())
        .get_model_info(GetModelInfoRequest::default())
        .await
        .unwrap()
        .into_inner();
    let wrist = info.joints.iter().find(|j| j.label == "wrist_flex").unwrap();
    let effective_max = wrist.effective_max.unwrap();
    assert!(
        (effective_max - 87.9f64.to_radians()).abs() < 0.01,
        "wrist_flex reaches {effective_max} rad"
    );

    let mut session = SessionServiceClient::new(conn.clone());
    session.reset_task(ResetTaskRequest::default()).await.unwrap();
    let moved = MoveRequest {
        delta_xyz: Some(Vec3 {
            x: 0.0,
            y: 0.0,
            z: 0.02,
        }),
        delta_rpy: None,
        ..Default::default()
    };
    let action = session.r#move(moved).await.unwrap().into_inner().action.unwrap();
    assert!(action.executed_steps > 0, "{action:?}");
    let close = GripperRequest {
        command: GripperCommand::Close.into(),
        ..Default::default()
    };
    session.gripper(close).await.unwrap();
    session.stop_episode(StopEpisodeRequest::default()).await.unwrap();

    let servos = arm.bus.servos();
    let wrist_goals: Vec<i32> = servos
        .write_log()
        .iter()
        .filter(|w| w.id == 4)
        .filter_map(|w| w.value(&GOAL_POSITION))
        .collect();
    let motor = &calibration.motors["wrist_flex"];
    assert!(!wrist_goals.is_empty());
    assert!(
        wrist_goals
            .iter()
            .all(|g| (motor.range_min..=motor.range_max).contains(g)),
        "every wrist_flex goal inside [{}, {}]: {wrist_goals:?}",
        motor.range_min,
        motor.range_max
    );
}

#[tokio::test]
async fn mode_switches_ride_through_a_bus_that_drops_and_garbles_replies() {
    let arm = VirtualArmServer::start(VirtualSo101::config(), StartMode::Sim, |_| {})
        .await
        .unwrap();
    let mut hardware = HardwareServiceClient::new(leased(&arm).await);
    arm.bus.servos().update_faults(|f| {
        f.drop_reply = 0.05;
        f.corrupt_checksum = 0.05;
    });
    let switch = |mode: Mode, sync: SyncOption| SetModeRequest {
        mode: mode.into(),
        sync: sync.into(),
        ..SetModeRequest::default()
    };
    for round in 0..10 {
        let mirror = hardware.set_mode(switch(Mode::Mirror, SyncOption::None)).await;
        assert!(mirror.is_ok(), "round {round}: {mirror:?}");
        let hil = hardware.set_mode(switch(Mode::Hil, SyncOption::MoveTwinToArm)).await;
        assert!(hil.is_ok(), "round {round}: {hil:?}");
    }
    let health = hardware
        .get_hardware_status(GetHardwareStatusRequest::default())
        .await
        .unwrap()
        .into_inner();
    let retried: u64 = health
        .servos
        .iter()
        .map(|s| s.comm_errors.as_ref().map_or(0, |c| c.retries))
        .sum();
    assert!(retried > 0, "the faults were injected: {health:?}");
}
