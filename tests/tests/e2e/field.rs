//! What real arms do in the field, on a virtual SO-101 behind a symbolic link (as udev's by-id
//! links are): the adapter unplugged and plugged back, a servo that resets its RAM, faults that
//! make the arm unable to move, a servo locked up after an overload, a joint that stalls. The
//! daemon survives each, tells the client the truth, and the twin alone keeps running.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::hil::{Rig, into_hil, set_mode, so101_with, until_status};
use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_e2e::{Conn, assert_reason};
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::*;
use feetech::control_table::{ACCELERATION, GOAL_POSITION, TORQUE_ENABLE};
use feetech::protocol::status::ServoError;
use feetech_emu::{EmuConfig, VirtualSo101};
use std::time::Duration;
use tokio::time::MissedTickBehavior;
use tonic::Code;

/// A rig whose daemon opens the virtual bus through a symbolic link.
async fn linked_rig(
    bus: EmuConfig,
    mode: StartMode,
    configure: impl FnOnce(&mut fakesim_hil::Settings) + Send + 'static,
) -> Rig {
    let configure = move |s: &mut fakesim_hil::Settings| {
        s.reconnect_interval = Some(Duration::from_millis(200));
        configure(s);
    };
    Rig::on(VirtualArmServer::start_linked(bus, mode, configure).await.unwrap()).await
}

fn link_state(status: &GetHardwareStatusResponse) -> LinkState {
    status.link.as_ref().map_or(LinkState::Unspecified, BusLink::state)
}

fn tick(action: [f64; 6]) -> TickRequest {
    TickRequest {
        action: action.to_vec(),
        ..TickRequest::default()
    }
}

/// Torque of every servo of the rig's virtual bus, as the servos hold it.
fn torque(rig: &Rig) -> Vec<i32> {
    (1..=6)
        .map(|id| rig.arm.bus.servos().register(id, &TORQUE_ENABLE).unwrap())
        .collect()
}

async fn status(hw: &mut HardwareServiceClient<Conn>) -> GetHardwareStatusResponse {
    hw.get_hardware_status(GetHardwareStatusRequest::default())
        .await
        .unwrap()
        .into_inner()
}

#[tokio::test]
async fn an_adapter_unplugged_in_mirror_is_reopened_at_its_path_and_returns_in_mirror_with_torque_off() {
    let mut rig = linked_rig(VirtualSo101::config(), StartMode::Mirror, |_| {}).await;
    let mut hw = rig.hardware().await;
    let mut session = rig.session().await;
    let started = session
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap()
        .into_inner();

    rig.arm.bus.unplug();
    let lost = until_status(&mut hw, 500, |s| link_state(s) != LinkState::Connected).await;
    assert!(!lost.bus_connected);
    assert!(lost.estop_latched, "a lost bus latches the stop");
    assert!(
        lost.servos.iter().all(|s| !s.torque_known),
        "torque is not known while the bus is lost"
    );
    let refused = hw
        .reset_emergency_stop(ResetEmergencyStopRequest::default())
        .await
        .unwrap_err();
    assert_reason(&refused, Code::Unavailable, "bus_unavailable");
    assert!(refused.message().contains("usb-virtual-so101"), "{}", refused.message());

    rig.arm.bus.replug().await.unwrap();
    let back = until_status(&mut hw, 1_000, |s| link_state(s) == LinkState::Connected).await;
    assert_eq!(back.mode(), Mode::Mirror);
    let link = back.link.unwrap();
    assert_eq!((link.losses, link.recoveries, link.attempts), (1, 1, 0));
    assert!(link.time_lost_s > 0.0);
    assert!(back.servos.iter().all(|s| s.torque_known && !s.torque_enabled));
    assert_eq!(torque(&rig), [0; 6], "the servos hold torque off");

    // The twin follows the arm again: a hand moves the elbow on the new device.
    rig.arm.bus.servos().set_present_position(3, 2500).unwrap();
    let followed = until_status(&mut hw, 500, |s| {
        (s.servos[2].twin_actual_rad - s.servos[2].twin_rad).abs() < 1e-3 && s.servos[2].twin_rad.abs() > 0.3
    })
    .await;
    assert!(followed.bus_connected);
    let reset = hw
        .reset_emergency_stop(ResetEmergencyStopRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(reset.was_latched);

    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    assert_eq!(stopped.run, started.run);
    let events = std::fs::read_to_string(stopped.artifacts.unwrap().events).unwrap();
    for state in [
        "\"state\":\"lost\"",
        "\"state\":\"connected\"",
        "\"event\":\"bus_lost\"",
    ] {
        assert!(events.contains(state), "{state} missing from {events}");
    }
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn while_the_bus_is_lost_the_twin_runs_alone_in_sim() {
    let rig = linked_rig(VirtualSo101::config(), StartMode::Mirror, |s| {
        s.reconnect_interval = None
    })
    .await;
    let mut hw = rig.hardware().await;
    rig.arm.bus.unplug();
    until_status(&mut hw, 500, |s| s.estop_latched && !s.bus_connected).await;
    let refused = hw
        .set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
        .await
        .unwrap_err();
    assert_reason(&refused, Code::Unavailable, "bus_unavailable");
    hw.set_mode(set_mode(Mode::Sim, SyncOption::None)).await.unwrap();

    let mut robot = rig.robot().await;
    let mut session = rig.session().await;
    session.reset_task(ResetTaskRequest::default()).await.unwrap();
    let start = robot.tick(tick([0.0; 6])).await.unwrap().into_inner().observation;
    for i in 0..30 {
        let mut action = [0.0; 6];
        action[0] = 0.01 * f64::from(i);
        robot.tick(tick(action)).await.unwrap();
    }
    let moved = robot
        .tick(tick([0.3, 0.0, 0.0, 0.0, 0.0, 0.0]))
        .await
        .unwrap()
        .into_inner()
        .observation;
    assert!(
        (moved[0] - start[0]).abs() > 0.1,
        "the twin moved: {} -> {}",
        start[0],
        moved[0]
    );
    session.r#move(fakesim_e2e::move_by(0.0, 0.02, 0.0)).await.unwrap();
    let still = status(&mut hw).await;
    assert!(
        still.estop_latched && link_state(&still) == LinkState::Lost,
        "--no-reconnect: the bus stays lost"
    );
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn an_adapter_unplugged_mid_chunk_in_hil_refuses_with_the_reason_and_keeps_the_journal() {
    let rig = linked_rig(VirtualSo101::config(), StartMode::Mirror, |_| {}).await;
    let (rig, mut hw, mut session, started) = into_hil(rig).await;
    let mut robot = rig.robot().await;
    rig.arm.bus.servos().clear_write_log();
    let ticks: Vec<TickRequest> = (0..200)
        .map(|i| tick([0.002 * f64::from(i), 0.0, 0.0, 0.0, 0.0, 0.0]))
        .collect();
    let chunk = tokio::spawn(async move { robot.tick_chunk(TickChunkRequest { ticks }).await });
    // Five ticks' goals went out (one sync write logs a goal for each of the six servos): the
    // first ticks were answered on readings taken before the adapter goes.
    while fakesim_e2e::virtual_arm::goal_writes(&rig.arm.bus) < 30 {
        tokio::task::yield_now().await;
    }
    rig.arm.bus.unplug();
    let answer = chunk.await.unwrap().unwrap().into_inner();
    let stop = answer.stopped.expect("the chunk stops at the loss");
    assert_eq!(stop.reason, "bus_unavailable", "{stop:?}");
    assert!((stop.tick_index as usize) < 200);

    let lost = until_status(&mut hw, 500, |s| !s.bus_connected).await;
    assert_eq!(lost.mode(), Mode::Mirror, "a loss leaves hil");
    let mut robot = rig.robot().await;
    assert_reason(
        &robot.tick(tick([0.0; 6])).await.unwrap_err(),
        Code::Unavailable,
        "bus_unavailable",
    );
    let refused = session.r#move(fakesim_e2e::move_by(0.0, 0.01, 0.0)).await.unwrap_err();
    assert_reason(&refused, Code::Unavailable, "bus_unavailable");
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    assert_eq!(stopped.run, started.run);
    let events = std::fs::read_to_string(stopped.artifacts.unwrap().events).unwrap();
    assert!(
        events.contains("\"event\":\"bus_lost\"") && events.contains("\"state\":\"lost\""),
        "{events}"
    );
    rig.arm.server.stop().await.unwrap();
}

/// Every goal written since the write log was cleared lies within the delta cap of where the
/// servo stood (arm joints, in steps).
fn goals_within_the_cap(rig: &Rig) -> usize {
    let cap_steps = 0.35 * 4096.0 / std::f64::consts::TAU + 2.0;
    let writes: Vec<_> = rig
        .arm
        .bus
        .servos()
        .write_log()
        .into_iter()
        .filter(|w| w.id <= 5)
        .filter_map(|w| w.value(&GOAL_POSITION).map(|goal| (w.id, goal, w.present_before)))
        .collect();
    for (id, goal, present) in &writes {
        assert!(
            f64::from((goal - present).abs()) <= cap_steps,
            "servo {id}: goal {goal} from {present}"
        );
    }
    writes.len()
}

#[tokio::test]
async fn a_servo_that_resets_in_hil_is_held_configured_again_and_torque_returns_through_the_ramp() {
    let rig = linked_rig(VirtualSo101::config(), StartMode::Mirror, |_| {}).await;
    let (rig, mut hw, mut session, _) = into_hil(rig).await;
    let mut robot = rig.robot().await;
    for _ in 0..5 {
        robot.tick(tick([0.1, 0.0, 0.0, 0.0, 0.0, 0.0])).await.unwrap();
    }
    rig.arm.bus.servos().reset_ram(4).unwrap();
    let held = until_status(&mut hw, 500, |s| s.servos[3].resets == 1 && s.estop_latched).await;
    let reason = held.estop_reason.unwrap();
    assert!(reason.starts_with("servo_reset: wrist_flex (servo 4)"), "{reason}");
    let servos = rig.arm.bus.servos();
    assert_eq!(
        servos.register(4, &TORQUE_ENABLE).unwrap(),
        0,
        "the reset servo stays without torque"
    );
    assert_eq!(servos.register(4, &ACCELERATION).unwrap(), 254, "configured again");
    assert_reason(
        &robot.tick(tick([0.1; 6])).await.unwrap_err(),
        Code::FailedPrecondition,
        "estop_latched",
    );

    hw.reset_emergency_stop(ResetEmergencyStopRequest::default())
        .await
        .unwrap();
    servos.clear_write_log();
    hw.set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
        .await
        .unwrap();
    assert_eq!(torque(&rig), [1; 6]);
    for _ in 0..20 {
        robot.tick(tick([0.5, 0.0, 0.0, 0.0, 0.0, 0.0])).await.unwrap();
    }
    assert!(goals_within_the_cap(&rig) >= 20);
    let stopped = session.stop_episode(StopEpisodeRequest {}).await.unwrap().into_inner();
    let events = std::fs::read_to_string(stopped.artifacts.unwrap().events).unwrap();
    assert!(events.contains("\"event\":\"servo_reset\""), "{events}");
    rig.arm.server.stop().await.unwrap();
}

/// Injects a fault on servo `id` in hil and checks that motion is refused `servo_fault` naming
/// its joint while it lasts; returns the rig with the fault still injected.
async fn motion_refused_during(
    inject: impl FnOnce(&feetech_emu::ServoBus),
    id: u8,
    joint: &str,
) -> (Rig, HardwareServiceClient<Conn>) {
    let rig = linked_rig(VirtualSo101::config(), StartMode::Mirror, |_| {}).await;
    let (rig, mut hw, mut session, _) = into_hil(rig).await;
    let mut robot = rig.robot().await;
    robot.tick(tick([0.0; 6])).await.unwrap();
    inject(rig.arm.bus.servos());
    until_status(&mut hw, 500, |s| {
        !s.servos[usize::from(id) - 1].errors.is_empty() || !s.servos[usize::from(id) - 1].torque_enabled
    })
    .await;
    for _ in 0..10 {
        let refused = robot.tick(tick([0.05, 0.0, 0.0, 0.0, 0.0, 0.0])).await.unwrap_err();
        assert_reason(&refused, Code::FailedPrecondition, "servo_fault");
        assert!(refused.message().contains(joint), "{}", refused.message());
    }
    let refused = session.r#move(fakesim_e2e::move_by(0.0, 0.01, 0.0)).await.unwrap_err();
    assert_reason(&refused, Code::FailedPrecondition, "servo_fault");
    (rig, hw)
}

#[tokio::test]
async fn a_voltage_error_holds_the_arm_until_it_clears() {
    let voltage = |servos: &feetech_emu::ServoBus| {
        servos.update_faults(|f| {
            f.forced_errors.insert(3, ServoError::VOLTAGE);
        })
    };
    let (rig, mut hw) = motion_refused_during(voltage, 3, "elbow_flex").await;
    assert_eq!(torque(&rig), [1; 6], "a voltage error holds, with torque on");
    rig.arm.bus.servos().update_faults(|f| f.forced_errors.clear());
    until_status(&mut hw, 500, |s| s.servos[2].errors.is_empty()).await;
    let mut robot = rig.robot().await;
    robot.tick(tick([0.05, 0.0, 0.0, 0.0, 0.0, 0.0])).await.unwrap();
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn an_overload_refuses_motion_until_torque_comes_back_through_set_mode() {
    let overload = |servos: &feetech_emu::ServoBus| {
        servos.update_faults(|f| {
            f.forced_errors.insert(2, ServoError::OVERLOAD);
        })
    };
    let (rig, mut hw) = motion_refused_during(overload, 2, "shoulder_lift").await;
    assert_eq!(torque(&rig), [0; 6], "an overload switches torque off");
    rig.arm.bus.servos().update_faults(|f| f.forced_errors.clear());
    until_status(&mut hw, 500, |s| s.servos[1].errors.is_empty()).await;
    let mut robot = rig.robot().await;
    let refused = robot.tick(tick([0.05, 0.0, 0.0, 0.0, 0.0, 0.0])).await.unwrap_err();
    assert_reason(&refused, Code::FailedPrecondition, "servo_fault");
    assert!(refused.message().contains("torque is off"), "{}", refused.message());
    rig.arm.bus.servos().clear_write_log();
    hw.set_mode(set_mode(Mode::Hil, SyncOption::MoveTwinToArm))
        .await
        .unwrap();
    for _ in 0..10 {
        robot.tick(tick([0.3, 0.0, 0.0, 0.0, 0.0, 0.0])).await.unwrap();
    }
    assert!(goals_within_the_cap(&rig) >= 10);
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn a_servo_locked_up_after_an_overload_is_named_with_what_to_do() {
    // The servo reports its overload, then stops answering until its power is cycled.
    let overload = |servos: &feetech_emu::ServoBus| {
        servos.update_faults(|f| {
            f.forced_errors.insert(2, ServoError::OVERLOAD);
        })
    };
    let (rig, mut hw) = motion_refused_during(overload, 2, "shoulder_lift").await;
    rig.arm.bus.servos().update_faults(|f| {
        f.lockup_after_overload.insert(2);
    });
    let latched = until_status(&mut hw, 500, |s| s.estop_latched).await;
    let reason = latched.estop_reason.unwrap();
    assert!(
        reason.contains("locked up") && reason.contains("power cycle"),
        "{reason}"
    );
    assert!(rig.arm.bus.servos().is_locked_up(2).unwrap());
    let mut robot = rig.robot().await;
    let refused = robot.tick(tick([0.0; 6])).await.unwrap_err();
    assert_reason(&refused, Code::FailedPrecondition, "servo_fault");
    assert!(refused.message().contains("shoulder_lift"), "{}", refused.message());
    rig.arm.server.stop().await.unwrap();
}

#[tokio::test]
async fn a_joint_that_strains_against_an_obstacle_for_its_window_loses_torque_and_latches() {
    // The shadow is told to wait for ever, so only the stall guard acts.
    let rig = Rig::on(
        VirtualArmServer::start(so101_with(&[], &[("elbow_flex", 6.0)]), StartMode::Mirror, |s| {
            s.shadow.ticks = u32::MAX;
        })
        .await
        .unwrap(),
    )
    .await;
    let (rig, mut hw, _session, _) = into_hil(rig).await;
    let mut robot = rig.robot().await;
    let into_the_obstacle = tick([0.0, 0.0, 0.6, 0.0, 0.0, 0.0]);
    // The stall window is wall time and the episode's budget is ticks, so the client paces its
    // ticks at 30 Hz as LeRobot's loop does: unpaced, a fast machine spends the 300-step budget
    // inside the 2 s window.
    let mut cadence = tokio::time::interval(Duration::from_secs_f64(1.0 / 30.0));
    cadence.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut ticks = 0;
    let refused = loop {
        cadence.tick().await;
        match robot.tick(into_the_obstacle.clone()).await {
            Ok(_) => ticks += 1,
            Err(refused) => break refused,
        }
        assert!(ticks < 1_000, "no stall after {ticks} ticks into the obstacle");
    };
    assert_reason(&refused, Code::FailedPrecondition, "servo_fault");
    assert!(refused.message().contains("stall: elbow_flex"), "{}", refused.message());
    let status = status(&mut hw).await;
    assert!(status.estop_latched);
    assert!(
        !status.servos[2].torque_enabled && status.servos[0].torque_enabled,
        "only the elbow went limp"
    );
    rig.arm.server.stop().await.unwrap();
}
