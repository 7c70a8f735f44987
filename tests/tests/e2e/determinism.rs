//! Same calls in the same order give the same states, bit for bit, across fresh servers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::{TestServer, named, ordered};
use fakesim_proto::v1::*;

/// Runs a fixed script of driving calls on a fresh server; returns every number it read back.
async fn run_script() -> Vec<u64> {
    let server = TestServer::start().await.unwrap();
    let mut robot = server.robot().await.unwrap();
    let mut seen = Vec::new();
    robot
        .set_joint_positions(SetJointPositionsRequest {
            positions: Some(named(&[("2", -0.4), ("elbow_flex", 0.7)])),
            hold: true,
        })
        .await
        .unwrap();
    robot
        .send_action(SendActionRequest {
            action: Some(named(&[("gripper", 0.8)])),
            n_substeps: Some(13),
            unit: 0,
        })
        .await
        .unwrap();
    robot.step(StepRequest { n_steps: 37 }).await.unwrap();
    robot
        .set_joint_velocities(SetJointVelocitiesRequest {
            velocities: Some(named(&[("1", 0.3)])),
        })
        .await
        .unwrap();
    for i in 0..8 {
        let k = f64::from(i);
        let action = [0.05 * k, -0.4 + 0.02 * k, 0.7 - 0.03 * k, 0.1, -0.1 * k, 0.8 - 0.1 * k];
        let tick = robot
            .tick(TickRequest {
                action: action.to_vec(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        seen.extend(tick.observation.iter().map(|x| x.to_bits()));
    }
    let mut ordered_targets = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner()
        .ctrl_targets;
    ordered_targets[3] += 0.2;
    robot
        .send_action(SendActionRequest {
            action: Some(ordered(&ordered_targets)),
            n_substeps: Some(50),
            unit: 0,
        })
        .await
        .unwrap();
    let state = robot
        .get_robot_state(GetRobotStateRequest::default())
        .await
        .unwrap()
        .into_inner();
    seen.extend(
        state
            .positions
            .iter()
            .chain(&state.velocities)
            .chain(&state.ctrl_targets)
            .map(|x| x.to_bits()),
    );
    seen.push(state.time_s.to_bits());
    server.stop().await.unwrap();
    seen
}

#[tokio::test(flavor = "multi_thread")]
async fn two_fresh_servers_give_identical_states_bit_for_bit() {
    let first = run_script().await;
    let second = run_script().await;
    assert_eq!(first.len(), 8 * 20 + 19);
    assert_eq!(first, second);
}
