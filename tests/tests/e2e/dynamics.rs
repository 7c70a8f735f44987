//! Dynamics profiles on a pair: `--left-dynamics` and `--right-dynamics` each reach their own
//! arm: GetModelInfo names the profile in force per side, and the same move on both arms in
//! `sim` starts after each arm's own delay and runs slower on the arm with the weaker servo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_arm::Joint;
use fakesim_e2e::{Conn, TestServer};
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::*;
use std::path::{Path, PathBuf};

/// Writes an SO-101 profile with every joint's delay `delay_s` and torque limit `force_limit`
/// (the other parameters near the model's defaults) and returns its path.
fn profile(dir: &Path, name: &str, delay_s: f64, force_limit: f64) -> PathBuf {
    let mut text = String::from("format = 1\narm = \"so101\"\n");
    for joint in Joint::ALL {
        text.push_str(&format!(
            "\n[joints.{}]\nkp = 900.0\ndamping = 0.7\narmature = 0.03\nfrictionloss = 0.05\nforce_limit = {force_limit}\ndelay_s = {delay_s}\n",
            joint.label()
        ));
    }
    let path = dir.join(format!("{name}.dynamics.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The pair's state now, in radians.
async fn state(robot: &mut RobotServiceClient<Conn>) -> GetRobotStateResponse {
    let request = GetRobotStateRequest::default();
    robot.get_robot_state(request).await.unwrap().into_inner()
}

#[tokio::test]
async fn each_arm_of_a_pair_runs_its_own_profile() {
    let dir = tempfile::tempdir().unwrap();
    let left = profile(dir.path(), "left_arm", 0.015, 0.5);
    let right = profile(dir.path(), "right_arm", 0.035, 2.8);
    let (l, r) = (left.clone(), right.clone());
    let server = TestServer::start_with(move |s| {
        s.pair = true;
        s.image_size = 16;
        s.pair_dynamics = [Some(l), Some(r)];
    })
    .await
    .unwrap();
    let mut robot = RobotServiceClient::new(server.leased().await.unwrap());
    let info = robot.get_model_info(GetModelInfoRequest {}).await.unwrap().into_inner();
    let by_side: Vec<(&str, &str, &str, f64)> = info
        .dynamics
        .iter()
        .map(|d| (d.side.as_str(), d.path.as_str(), d.found_by.as_str(), d.max_delay_s))
        .collect();
    let expected = [
        ("left", left.to_str().unwrap(), "named", 0.015),
        ("right", right.to_str().unwrap(), "named", 0.035),
    ];
    assert_eq!(by_side, expected, "{:?}", info.dynamics);

    // The same swing of shoulder_pan on both arms. 25 ms in, the left arm (a 15 ms delay) is
    // under way and the right (35 ms) has not felt it yet; 200 ms in, the left's servo (a
    // 0.5 N·m torque limit) has fallen behind the right's (2.8 N·m).
    let start = state(&mut robot).await;
    let mut targets = start.ctrl_targets.clone();
    targets[0] += 0.5;
    targets[6] += 0.5;
    let mut moved = Vec::new();
    for period_s in [0.025, 0.175] {
        let request = TickRequest {
            action: targets.clone(),
            period_s: Some(period_s),
            ..Default::default()
        };
        robot.tick(request).await.unwrap();
        let now = state(&mut robot).await;
        moved.push([0, 6].map(|i| now.positions[i] - start.positions[i]));
    }
    let [[left_25, right_25], [left_200, right_200]] = moved[..] else {
        unreachable!()
    };
    // Measured: 0.67 mrad against 0.0002 mrad, then 80 against 416 mrad.
    assert!(left_25 > 1e-4 && right_25.abs() < 1e-6, "{moved:?}");
    assert!(left_200 > 0.0 && right_200 > 2.0 * left_200, "{moved:?}");
}
