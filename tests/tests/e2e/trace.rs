//! `--trace DIR` end to end: a daemon on a virtual SO-101 records the arm's bus in mirror and in
//! hil, and the file read back with `fakesim_trace::read` holds the hand's motion as readings
//! (mirror, torque off) and the ramped goals (hil, torque on), each kind in time order, and
//! `fakesim-identify` reads it as a recording.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::hil::{Rig, into_hil, until_status};
use fakesim_arm::Joint;
use fakesim_e2e::Conn;
use fakesim_e2e::virtual_arm::VirtualArmServer;
use fakesim_feetech_arm::mapping::JointMapping;
use fakesim_hil::Mode as StartMode;
use fakesim_proto::v1::TickRequest;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_trace::{Mode, Record, Trace};
use feetech_emu::VirtualSo101;
use std::path::{Path, PathBuf};
use uom::si::angle::radian;

/// The one trace file in `dir`.
fn trace_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "one trace per arm and run: {files:?}");
    files[0].clone()
}

/// Reads the trace once per joint-state sample of the daemon until `done` holds.
async fn until_trace(hw: &mut HardwareServiceClient<Conn>, path: &Path, done: impl Fn(&Trace) -> bool) -> Trace {
    until_status(hw, 500, |_| fakesim_trace::read(path).is_ok_and(|trace| done(&trace))).await;
    fakesim_trace::read(path).unwrap()
}

fn readings(trace: &Trace) -> impl Iterator<Item = (f64, [f64; 6], bool, Mode)> + '_ {
    trace.records.iter().filter_map(|r| match *r {
        Record::Reading {
            t, rad, torque, mode, ..
        } => Some((t, rad, torque, mode)),
        _ => None,
    })
}

fn goals(trace: &Trace) -> impl Iterator<Item = (f64, [f64; 6], bool, Mode)> + '_ {
    trace.records.iter().filter_map(|r| match *r {
        Record::Goal { t, rad, torque, mode } => Some((t, rad, torque, mode)),
        _ => None,
    })
}

#[tokio::test]
async fn mirror_and_hil_are_recorded_to_a_trace_read_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let traces = dir.path().join("traces");
    let into = traces.clone();
    let arm = VirtualArmServer::start(VirtualSo101::config(), StartMode::Mirror, move |s| {
        s.trace_dir = Some(into);
    })
    .await
    .unwrap();
    let rig = Rig::on(arm).await;
    let path = trace_file(&traces);
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with("virtual_so101-") && name.ends_with("Z.fstrace"),
        "named by the calibration file and the UTC time: {name}"
    );
    let mapping = JointMapping::so101()
        .bind(
            &VirtualSo101::calibration(),
            &fakesim_twin::Sim::load(&fakesim_twin::Scene::Tabletop, 10)
                .unwrap()
                .joint_ranges(),
        )
        .unwrap();

    // Mirror: the hand moves the elbow; the trace's readings follow, torque off.
    rig.arm.bus.servos().set_present_position(3, 2600).unwrap();
    let elbow = mapping.servo_to_twin(Joint::ElbowFlex, 2600).get::<radian>();
    let mut hw = rig.hardware().await;
    let trace = until_trace(&mut hw, &path, |trace| {
        readings(trace).any(|(_, rad, _, mode)| mode == Mode::Mirror && (rad[2] - elbow).abs() < 1e-3)
    })
    .await;
    assert_eq!(trace.header.arm, "so101");
    assert!(
        readings(&trace)
            .filter(|r| r.3 == Mode::Mirror)
            .all(|(_, _, torque, _)| !torque),
        "torque is off in mirror"
    );
    let reading = trace
        .records
        .iter()
        .find_map(|r| match r {
            Record::Reading { extras, .. } => Some(extras[0]),
            _ => None,
        })
        .unwrap();
    assert!(reading.voltage_v > 5.0, "the servo's voltage is recorded: {reading:?}");

    // Hil: ticks ramp the shoulder towards 0.2 rad; the goals are recorded with torque on.
    let (rig, _hw, _session, _) = into_hil(rig).await;
    let mut robot = rig.robot().await;
    let tick = TickRequest {
        action: vec![0.2, -0.1, 0.3, 0.2, 0.0, 0.4],
        ..TickRequest::default()
    };
    for _ in 0..10 {
        robot.tick(tick.clone()).await.unwrap();
    }
    let last_sent = rig
        .arm
        .bus
        .servos()
        .register(1, &feetech::control_table::GOAL_POSITION)
        .unwrap();
    let last_rad = mapping.servo_to_twin(Joint::ShoulderPan, last_sent).get::<radian>();
    let mut hw = rig.hardware().await;
    let trace = until_trace(&mut hw, &path, |trace| {
        goals(trace).any(|(_, rad, _, mode)| mode == Mode::Hil && (rad[0] - last_rad).abs() < 1e-4)
    })
    .await;
    let hil_goals: Vec<_> = goals(&trace).filter(|g| g.3 == Mode::Hil).collect();
    assert!(hil_goals.len() >= 10, "{} goals in hil", hil_goals.len());
    assert!(hil_goals.iter().all(|g| g.2), "torque is on for every goal in hil");
    assert!(
        readings(&trace).any(|(_, _, torque, mode)| torque && mode == Mode::Hil),
        "readings in hil, torque on"
    );
    assert!(
        trace.records.iter().any(|r| matches!(
            r,
            Record::State {
                torque: true,
                mode: Mode::Mirror | Mode::Hil,
                ..
            }
        )),
        "the torque switch is recorded"
    );
    let increasing = |times: Vec<f64>| times.windows(2).all(|w| w[0] < w[1]);
    assert!(
        increasing(readings(&trace).map(|r| r.0).collect()),
        "readings in time order"
    );
    assert!(increasing(goals(&trace).map(|g| g.0).collect()), "goals in time order");
    // The fit reads it as it is: goals, readings and each reading's torque.
    let recording = fakesim_identify::read::trace::read(&path).unwrap();
    assert!(recording.goals.len() >= hil_goals.len() && recording.readings.len() > 10);
    assert_eq!(recording.torque.unwrap().len(), recording.readings.len());
    rig.arm.server.stop().await.unwrap();
}
