//! The client's clock in `hil` on a virtual SO-101 (a pseudo-terminal at 1 Mbaud): each `Tick`
//! writes its goals to the bus through the safety layers and returns, the client pacing the
//! ticks; once the client falls silent the watchdog holds the arm. (That a tick sets no
//! deadline to wait for is checked on the tick driver itself, in `fakesim-bridge`.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::CallMetadata;
use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_hil::MAX_TTL_MS;
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::*;
use feetech::control_table::GOAL_POSITION;
use feetech_emu::VirtualSo101;
use serde_json::Value;
use tokio_stream::StreamExt;

/// Goal-position writes the bus executed for servo `id`.
fn goal_writes(rig: &VirtualArmServer, id: u8) -> usize {
    let log = rig.bus.servos().write_log();
    log.iter()
        .filter(|w| w.id == id && w.value(&GOAL_POSITION).is_some())
        .count()
}

#[tokio::test]
async fn each_hil_tick_writes_its_goals_to_the_bus_and_a_silent_client_is_held() {
    let rig = VirtualArmServer::start(VirtualSo101::config(), StartMode::Mirror, |_| {})
        .await
        .unwrap();
    let mut hardware = HardwareServiceClient::new(rig.server.channel().await.unwrap());
    let lease = hardware
        .acquire_lease(AcquireLeaseRequest {
            holder: "clock test".into(),
            ttl_ms: MAX_TTL_MS,
            takeover: false,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .lease
        .unwrap()
        .lease_id;
    let conn = rig
        .server
        .with_metadata(CallMetadata::lease(&lease).unwrap())
        .await
        .unwrap();
    let (mut session, mut robot, mut hardware) = (
        SessionServiceClient::new(conn.clone()),
        RobotServiceClient::new(conn.clone()),
        HardwareServiceClient::new(conn),
    );
    let run = session
        .reset_task(ResetTaskRequest {
            max_steps: Some(0),
            ..ResetTaskRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .run;
    hardware
        .set_mode(SetModeRequest {
            mode: Mode::Hil.into(),
            sync: SyncOption::MoveTwinToArm.into(),
            sync_max_speed_rad_s: Some(3.0),
        })
        .await
        .unwrap();
    let set = robot
        .set_control_period(SetControlPeriodRequest { period_s: 1.0 / 30.0 })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(set.period_s, 1.0 / 30.0);
    let held = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner()
        .positions;

    let before: Vec<usize> = (1..=6).map(|id| goal_writes(&rig, id)).collect();
    for i in 0..30 {
        let mut action = held.clone();
        action[0] += 0.003 * f64::from(i);
        let out = robot
            .tick(TickRequest {
                action,
                ..TickRequest::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(out.observation.len(), 20);
    }
    // A reading asked for after the last tick went out follows its goals on the one bus, so
    // once it is in, the emulator has executed every goal written.
    let mut status = HardwareServiceClient::new(rig.server.with_metadata(CallMetadata::none()).await.unwrap());
    let mut samples = status
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 100.0,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut first = None;
    for _ in 0..500 {
        let reading = samples.next().await.unwrap().unwrap().reading_seq;
        match (first, reading) {
            (None, Some(seq)) => first = Some(seq),
            (Some(start), Some(seq)) if seq >= start + 2 => break,
            _ => {}
        }
    }
    let after: Vec<usize> = (1..=6).map(|id| goal_writes(&rig, id)).collect();
    let written: Vec<usize> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    assert_eq!(written, vec![30; 6], "one goal per servo per tick on the bus");

    // Silent from here: the watchdog holds the arm and journals the hold.
    let events = rig.server.runs_dir().join(&run).join("events.jsonl");
    let journal = || -> Vec<Value> {
        let text = std::fs::read_to_string(&events).unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let is_hold = |l: &Value| l["kind"] == "safety" && l["safety"]["event"] == "watchdog_hold";
    let holds_while_ticking = journal().iter().filter(|l| is_hold(l)).count();
    let mut held = false;
    for _ in 0..500 {
        if journal().iter().filter(|l| is_hold(l)).count() > holds_while_ticking {
            held = true;
            break;
        }
        samples.next().await.unwrap().unwrap();
    }
    assert!(held, "no watchdog hold journaled after the client fell silent");
    session.stop_episode(StopEpisodeRequest {}).await.unwrap();
    let lines = journal();
    let ticks = lines
        .iter()
        .filter(|l| l["kind"] == "robot_call" && l["call"] == "tick")
        .count();
    assert_eq!(ticks, 30);
    let period = lines.iter().find(|l| l["kind"] == "control_period").unwrap();
    assert_eq!(period["period_s"], 1.0 / 30.0);
}
