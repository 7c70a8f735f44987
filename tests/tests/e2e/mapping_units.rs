//! The API's LeRobot units go through the joint mapping the real arm is driven with: with a
//! `--mapping` file whose sign and offset differ from the default (an aligned arm), a servo
//! position still reads, in LeRobot degrees, what LeRobot itself reads from that servo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_arm::Joint;
use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_e2e::{CallMetadata, until_sample};
use fakesim_feetech_arm::mapping::JointMapping;
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::{GetRobotStateRequest, JointUnit};
use feetech_emu::VirtualSo101;
use uom::si::angle::radian;

#[tokio::test(flavor = "multi_thread")]
async fn lerobot_degrees_read_what_lerobot_reads_through_an_aligned_mapping() {
    let calibration = VirtualSo101::calibration();
    let mut table = JointMapping::so101();
    let pan = &mut table.joints[Joint::ShoulderPan.index()];
    (pan.sign, pan.offset_rad) = (-1, 0.1);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("aligned.mapping.json");
    std::fs::write(&file, table.to_json()).unwrap();
    let rig = VirtualArmServer::start(VirtualSo101::config(), StartMode::Mirror, move |s| {
        s.mapping = Some(file)
    })
    .await
    .unwrap();
    // The hand turns the pan 300 steps off the middle of its calibrated range.
    let motor = &calibration.motors["shoulder_pan"];
    let middle = f64::from(motor.range_min + motor.range_max) / 2.0;
    let steps = middle.round() as i32 + 300;
    rig.bus.servos().set_present_position(1, steps).unwrap();
    // LeRobot's DEGREES reading of that position: about the middle, 4095 steps a turn.
    let lerobot_deg = (f64::from(steps) - middle) * 360.0 / 4095.0;
    let twins = fakesim_twin::Sim::load(&fakesim_twin::Scene::Tabletop, 10)
        .unwrap()
        .joint_ranges();
    let twin_rad = table
        .bind(&calibration, &twins)
        .unwrap()
        .servo_to_twin(Joint::ShoulderPan, steps)
        .get::<radian>();
    assert!(
        (twin_rad - (0.1 - lerobot_deg.to_radians())).abs() < 1e-9,
        "the file's sign and offset"
    );
    let mut hardware = HardwareServiceClient::new(rig.server.with_metadata(CallMetadata::none()).await.unwrap());
    until_sample(&mut hardware, 200, |s| {
        s.reading_seq.is_some() && (s.joints[0].twin_rad - twin_rad).abs() < 1e-6
    })
    .await
    .unwrap();
    let mut robot = RobotServiceClient::new(rig.server.with_metadata(CallMetadata::none()).await.unwrap());
    let state = robot
        .get_robot_state(GetRobotStateRequest {
            unit: JointUnit::LerobotDegrees.into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        (state.positions[0] - lerobot_deg).abs() < 1e-6,
        "the API reads {} deg, LeRobot {lerobot_deg} deg",
        state.positions[0]
    );
    rig.server.stop().await.unwrap();
}
