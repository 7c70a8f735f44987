//! In `hil` every command for the real arm is previewed on the twin before anything moves: a
//! command whose preview drives the gripper into the table (its TCP well above it, so the
//! table layer lets it through) or the forearm into the base is refused with the links named
//! and no goal reaches the servos (checked on the bus). The same commands in `sim` run and
//! show the contact; a safe command passes and moves the arm.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_e2e::{Conn, ordered};
use fakesim_hil::Mode as StartMode;
use fakesim_proto::errors::error_reason;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::*;
use feetech_emu::VirtualSo101;
use tonic::Code;

/// Wrist flexed down with the shoulder forward: the TCP stays 7 cm above the table while the
/// gripper's heel goes into it.
const GRIPPER_INTO_TABLE: [f64; 6] = [0.0, 0.6, 0.5, -1.0, 0.0, 0.0];
/// Upper arm back, elbow folded: the forearm swings into the shoulder above the base.
const FOREARM_INTO_BASE: [f64; 6] = [0.0, -1.5, 1.6, 0.0, 0.0, 0.0];
/// A small move in free space.
const SAFE: [f64; 6] = [0.1, -0.1, 0.1, 0.1, 0.0, 0.5];

fn action(target: [f64; 6]) -> SendActionRequest {
    SendActionRequest {
        action: Some(ordered(&target)),
        n_substeps: Some(10),
        ..SendActionRequest::default()
    }
}

async fn robot(arm: &VirtualArmServer) -> RobotServiceClient<Conn> {
    RobotServiceClient::new(arm.server.leased().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn in_hil_a_command_whose_preview_collides_is_refused_before_any_goal_is_written() {
    let arm = VirtualArmServer::start(VirtualSo101::config(), StartMode::Hil, |_| {})
        .await
        .unwrap();
    let mut robot = robot(&arm).await;
    let before = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    arm.bus.servos().clear_write_log();

    for (target, links) in [
        (GRIPPER_INTO_TABLE, ["gripper", "table"]),
        (FOREARM_INTO_BASE, ["lower_arm", "_"]),
    ] {
        let refused = robot.send_action(action(target)).await.unwrap_err();
        assert_eq!(
            (refused.code(), error_reason(&refused).as_deref()),
            (Code::FailedPrecondition, Some("preview_refused")),
            "{target:?}: {refused:?}"
        );
        let message = refused.message();
        assert!(
            links.iter().filter(|l| **l != "_").all(|l| message.contains(l)),
            "{target:?}: {message}"
        );
        assert!(message.contains("contact"), "{message}");
    }
    assert_eq!(arm.goal_writes(), 0, "nothing reached the servos");
    let after = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    for (b, a) in before.positions.iter().zip(&after.positions) {
        assert!((a - b).abs() < 0.02, "the arm held still: {before:?} -> {after:?}");
    }

    robot.send_action(action(SAFE)).await.unwrap();
    assert!(arm.goal_writes() > 0, "a safe command moves the arm");
    arm.server.stop().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn in_sim_the_same_commands_run_and_show_the_contact() {
    let server = fakesim_e2e::TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    for (target, geom) in [(GRIPPER_INTO_TABLE, "table"), (FOREARM_INTO_BASE, "")] {
        robot
            .set_joint_positions(SetJointPositionsRequest {
                positions: Some(ordered(&[0.0; 6])),
                hold: true,
            })
            .await
            .unwrap();
        for _ in 0..8 {
            robot.send_action(action(target)).await.unwrap();
        }
        let contacts = robot
            .get_contacts(GetContactsRequest {})
            .await
            .unwrap()
            .into_inner()
            .contacts;
        let touching = contacts
            .iter()
            .filter(|c| c.dist_m < 0.0)
            .any(|c| [&c.geom1, &c.geom2].iter().any(|g| g.contains(geom)));
        assert!(touching, "{target:?}: {contacts:?}");
    }
    server.stop().await.unwrap();
}
