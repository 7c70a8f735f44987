//! The virtual bus's obstacle as the daemon sees it in hil: the real joint stops at the
//! obstacle while its goal lies beyond, its load reads high, and the twin mirrors where it
//! stopped (the scaffolding a shadow's obstruction test stands on).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::named;
use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::*;
use feetech_emu::so101::JointOffset;
use feetech_emu::{EmuConfig, VirtualSo101};

/// Where the obstacle stands, degrees of the elbow's model angle.
const OBSTACLE_DEG: f64 = 10.0;

#[tokio::test(flavor = "multi_thread")]
async fn in_hil_an_elbow_driven_past_an_obstacle_stops_there_under_load() {
    let calibration = VirtualSo101::calibration();
    let mut servos = VirtualSo101::holding(&calibration, &[]).unwrap();
    let obstacle = JointOffset {
        label: "elbow_flex".into(),
        degrees: OBSTACLE_DEG,
    };
    VirtualSo101::hinder(&mut servos, &calibration, &[], &[obstacle], &[]).unwrap();
    // The shadow would hold the pushing elbow within 3 ticks (the `hil` module); here it
    // waits 1000 ticks, so the bus's own behaviour shows.
    let rig = VirtualArmServer::start(EmuConfig::new(servos), StartMode::Mirror, |s| {
        s.shadow.ticks = 1000;
    })
    .await
    .unwrap();
    let conn = rig.server.leased().await.unwrap();
    let mut hardware = HardwareServiceClient::new(conn.clone());
    let mut robot = RobotServiceClient::new(conn);
    hardware
        .set_mode(SetModeRequest {
            mode: Mode::Hil.into(),
            sync: SyncOption::MoveTwinToArm.into(),
            sync_max_speed_rad_s: Some(3.0),
        })
        .await
        .unwrap();

    // 0.5 rad (29°) asked for, in steps the safety layers let through.
    let mut elbow = 0.0;
    for _ in 0..20 {
        let action = SendActionRequest {
            action: Some(named(&[("elbow_flex", 0.5)])),
            n_substeps: Some(20),
            unit: JointUnit::Radians.into(),
        };
        robot.send_action(action).await.unwrap();
        let state = robot
            .get_robot_state(GetRobotStateRequest::default())
            .await
            .unwrap()
            .into_inner();
        elbow = state.positions[2];
    }
    let stopped = OBSTACLE_DEG.to_radians();
    assert!(
        (elbow - stopped).abs() < 0.02,
        "the twin mirrors the elbow at {elbow} rad"
    );
    let status = hardware
        .get_hardware_status(GetHardwareStatusRequest::default())
        .await
        .unwrap()
        .into_inner();
    let servo = status.servos.iter().find(|s| s.label == "elbow_flex").unwrap();
    assert!(
        (servo.position_deg - OBSTACLE_DEG).abs() < 1.5,
        "elbow reads {} deg",
        servo.position_deg
    );
    assert!(servo.load_percent.abs() > 50.0, "load {} %", servo.load_percent);
    rig.server.stop().await.unwrap();
}
