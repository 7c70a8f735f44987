//! The twin as an arm, the default mapping against the compiled model, and the table guard on
//! a scratch copy of the twin.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{TWIN_RANGES, twin, virtual_calibration};
use fakesim_arm::{Arm, ArmError, ValueError};
use fakesim_bridge::twin::{ScratchTwinKinematics, TwinArm};
use fakesim_feetech_arm::mapping::JointMapping;
use fakesim_safety::{SafetyError, TableGuard, TcpKinematics};
use fakesim_twin::Scene;

#[tokio::test]
async fn the_default_mapping_fits_the_compiled_twin_and_the_virtual_calibration() {
    let twin = twin();
    let ranges = twin.with_sim(|sim| sim.joint_ranges()).await.unwrap();
    for (model, fixture) in ranges.iter().zip(TWIN_RANGES) {
        assert!((model.lo - fixture.lo).abs() < 1e-6 && (model.hi - fixture.hi).abs() < 1e-6);
    }
    JointMapping::so101().validate(&virtual_calibration(), &ranges).unwrap();
}

#[tokio::test]
async fn the_twin_arm_reads_joints_and_drives_the_setpoints() {
    let twin = twin();
    let arm: Box<dyn Arm> = Box::new(TwinArm::new(twin.clone()));
    assert_eq!(arm.port(), None);
    let start = arm.read_state().await.unwrap();
    assert_eq!(start.positions_rad(), twin.with_sim(|s| s.arm_qpos()).await.unwrap());
    assert!(start.joints.iter().all(|j| j.servo.is_none()));

    let goals = [0.3, -0.4, 0.5, 0.2, -0.6, 0.8];
    arm.command(goals).await.unwrap();
    assert_eq!(twin.with_sim(|s| s.arm_ctrl()).await.unwrap(), goals);
    twin.with_sim(|s| (0..200).for_each(|_| s.step_tick())).await.unwrap();
    let reached = arm.read_state().await.unwrap().positions_rad();
    for (got, want) in reached.iter().zip(goals) {
        assert!((got - want).abs() < 0.05, "{reached:?} vs {goals:?}");
    }

    // Outside the setpoint range: refused, setpoints unchanged.
    let err = arm.command([0.0, 0.0, 3.0, 0.0, 0.0, 0.0]).await.unwrap_err();
    assert!(
        matches!(err, ArmError::Refused(ValueError::OutOfRange { ref joint, .. }) if joint == "elbow_flex"),
        "{err}"
    );
    assert_eq!(twin.with_sim(|s| s.arm_ctrl()).await.unwrap(), goals);

    let health = arm.health();
    assert!(health.servos.is_empty() && !health.bus_lost() && health.torque == fakesim_arm::Torque::On);
    arm.set_torque(false).await.unwrap();
    assert_eq!(arm.health().torque, fakesim_arm::Torque::Off);
}

#[test]
fn the_table_guard_refuses_targets_that_reach_into_the_table() {
    let kinematics = ScratchTwinKinematics::load(&Scene::EmptyTable).unwrap();
    let guard = TableGuard::default();
    // At the zero pose the TCP is well above the table.
    assert!(kinematics.tcp_position(&[0.0; 6]).unwrap()[2] > 0.9);
    guard.check(&[0.0; 6], &kinematics).unwrap();
    // Lifting the shoulder by 1 rad brings the TCP below the table top.
    let err = guard.check(&[0.0, 1.0, 0.0, 0.0, 0.0, 0.0], &kinematics).unwrap_err();
    let SafetyError::BelowTable { tcp, .. } = err else {
        panic!("unexpected {err}");
    };
    assert!(tcp[2] < 0.8, "{tcp:?}");
    // The scratch copy is reusable: the zero pose passes again.
    guard.check(&[0.0; 6], &kinematics).unwrap();
    // A target the model cannot take cannot be checked, so it is refused.
    let err = guard.check(&[0.0, 0.0, 3.0, 0.0, 0.0, 0.0], &kinematics).unwrap_err();
    assert!(
        matches!(err, SafetyError::Kinematics(ref m) if m.contains("elbow_flex")),
        "{err}"
    );
}
