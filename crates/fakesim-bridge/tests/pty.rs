//! FeetechArm on a real serial port path: the virtual SO-101 on a pseudo-terminal at
//! 1 Mbaud, moving in wall-clock time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use fakesim_arm::Joint;
use fakesim_arm::{Arm, ArmError, ArmState};
use fakesim_feetech_arm::{FeetechArm, FeetechArmConfig};
use feetech::bus::BusConfig;
use feetech::control_table::DEFAULT_BAUD_RATE;
use feetech_emu::{VirtualSo101, serve_pty};

/// Reads until `done` holds, or fails after `limit` (a bounded poll: each read is one real
/// bus transaction).
async fn read_until(arm: &FeetechArm, limit: Duration, done: impl Fn(&ArmState) -> bool) -> ArmState {
    tokio::time::timeout(limit, async {
        loop {
            let state = arm.read_state().await.unwrap();
            if done(&state) {
                return state;
            }
        }
    })
    .await
    .expect("the arm did not get there in time")
}

#[tokio::test]
async fn reads_and_moves_the_virtual_arm_over_a_pseudo_terminal_at_1_mbaud() {
    assert_eq!(DEFAULT_BAUD_RATE, 1_000_000);
    let pty = serve_pty(VirtualSo101::config()).await.unwrap();
    let path = pty.path().to_path_buf();
    let config = FeetechArmConfig::new(path.display().to_string());
    let arm = FeetechArm::open(
        &path,
        DEFAULT_BAUD_RATE,
        BusConfig::default(),
        common::mapping(),
        config,
    )
    .unwrap();
    assert_eq!(arm.port(), Some(path.to_str().unwrap()));

    let rest = arm.read_state().await.unwrap();
    for joint in Joint::ALL {
        assert!(
            rest.joint(joint).position_rad.abs() < 0.002,
            "{joint} rests at the twin's zero"
        );
    }

    arm.set_torque(true).await.unwrap();
    let goals = [0.3, -0.3, 0.4, -0.2, 0.5, 0.6];
    arm.command(goals).await.unwrap();
    let reached = read_until(&arm, Duration::from_secs(10), |state| {
        state
            .positions_rad()
            .iter()
            .zip(goals)
            .all(|(got, want)| (got - want).abs() < 0.002)
    })
    .await;
    assert!(reached.joints.iter().all(|j| j.servo.is_some()));
    let health = arm.health();
    assert!(health.torque == fakesim_arm::Torque::On && !health.bus_lost());

    // The adapter is pulled: the port is reported gone.
    pty.servos().unplug();
    pty.finished().await.unwrap();
    let err = arm.read_state().await.unwrap_err();
    assert!(matches!(err, ArmError::PortGone { .. }), "{err}");
    assert!(arm.health().bus_lost());
}
