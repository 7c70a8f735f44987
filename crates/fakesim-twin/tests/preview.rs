//! Previews on the twin's scratch copy: unsafe chunks show their contacts and violations, a safe
//! chunk shows none, a closing gripper on a cube is a stall, inputs are checked, and the live
//! twin never changes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::preview::{ContactClass, PreviewRequest, StartState, ViolationKind, check_actions};
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::values::ValueError;
use fakesim_twin::{JointValues, PreviewReport, Scene, Sim, TwinConfig, TwinError, TwinHandle};

/// Arm straight out along +x, gripper nearly closed: the model's initial pose.
const REST: [f64; 6] = [0.0; 6];
/// Shoulder down: the gripper reaches into the table in front of the arm.
const INTO_TABLE: [f64; 6] = [0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
/// Upper arm back, elbow folded: the forearm swings into the shoulder above the base.
const INTO_BASE: [f64; 6] = [0.0, -1.5, 1.6, 0.0, 0.0, 0.0];
/// A modest move in free space.
const SAFE: [f64; 6] = [0.3, -0.3, 0.3, 0.2, 0.5, 0.5];
/// Jaws pointing down around the red cube's spot on the table, gripper open.
const OVER_CUBE: [f64; 6] = [0.0, 0.0, 0.45, 1.2, 0.0, 1.0];

/// What a refused request's error should be.
type Expected = fn(&TwinError) -> bool;

fn sim() -> Sim {
    Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK).unwrap()
}

/// `ticks` actions moving linearly from `from` to `to`.
fn chunk(from: [f64; 6], to: [f64; 6], ticks: usize) -> Vec<JointValues> {
    (1..=ticks)
        .map(|k| {
            let s = k as f64 / ticks as f64;
            JointValues::Ordered((0..6).map(|i| from[i] + (to[i] - from[i]) * s).collect())
        })
        .collect()
}

fn preview(sim: &mut Sim, to: [f64; 6]) -> PreviewReport {
    sim.preview(&PreviewRequest::new(chunk(REST, to, 20), 20)).unwrap()
}

#[test]
fn a_chunk_into_the_table_shows_the_gripper_table_contact() {
    let report = preview(&mut sim(), INTO_TABLE);
    let contact = report
        .contacts
        .iter()
        .find(|c| c.class == ContactClass::Table)
        .expect("a table contact");
    assert!(
        ["gripper", "moving_jaw"].contains(&contact.link.as_str()),
        "{contact:?}"
    );
    assert_eq!(
        (contact.other_body.as_str(), contact.other_geom.as_str()),
        ("table", "table_top")
    );
    assert!(contact.max_depth_m > 0.0 && contact.violation, "{contact:?}");
    let violation = &report.violations[0];
    assert_eq!(violation.kind, ViolationKind::TableContact);
    assert_eq!(violation.links, [contact.link.clone(), "table".to_owned()]);
    assert!(report.summary().starts_with("table_contact: "), "{}", report.summary());
    let clearance = report.table_clearance.as_ref().unwrap();
    assert!(clearance.clearance_m < 0.0, "{clearance:?}");
    assert!(!report.is_safe());
}

#[test]
fn a_chunk_folding_the_forearm_into_the_base_shows_the_contact() {
    let report = preview(&mut sim(), INTO_BASE);
    let contact = report
        .contacts
        .iter()
        .find(|c| matches!(c.class, ContactClass::Base | ContactClass::SelfContact))
        .expect("a base or self contact");
    assert!(
        [&contact.link, &contact.other_body].contains(&&"lower_arm".to_owned()),
        "{contact:?}"
    );
    assert!(
        report.violations.iter().any(
            |v| matches!(v.kind, ViolationKind::BaseContact | ViolationKind::SelfContact)
                && v.links.contains(&"lower_arm".to_owned())
        ),
        "{}",
        report.summary()
    );
}

#[test]
fn a_safe_chunk_shows_nothing_and_reports_its_motion() {
    let report = preview(&mut sim(), SAFE);
    assert!(report.is_safe(), "{}", report.summary());
    assert!(report.contacts.is_empty(), "{:?}", report.contacts);
    assert_eq!(
        (report.ticks, report.substeps_per_tick),
        (40, DEFAULT_SUBSTEPS_PER_TICK)
    );
    assert!(report.table_clearance.unwrap().clearance_m > 0.02);
    assert!(report.gripper_stall.is_none());
    for (joint, target) in report.joints.iter().zip(SAFE) {
        assert!((joint.final_qpos - target).abs() < 0.05, "{joint:?} vs {target}");
        assert!(joint.limit_first_tick.is_none() && joint.past_limit_rad <= 0.0);
    }
    // The pan moves 0.3 rad in one second: its peak speed is real and bounded.
    assert!(report.joints[0].peak_speed_rad_s > 0.2 && report.joints[0].peak_speed_rad_s < 5.0);
    assert!(report.joints[0].peak_accel_rad_s2 > 0.0);
}

#[test]
fn an_arm_resting_on_the_table_may_move_off_it() {
    let mut sim = sim();
    sim.send_action(&JointValues::Ordered(INTO_TABLE.to_vec()), 400)
        .unwrap();
    let held = sim.preview(&PreviewRequest::new(Vec::new(), 10)).unwrap();
    let resting = held.contacts.iter().find(|c| c.class == ContactClass::Table).unwrap();
    assert!(resting.start_depth_m.is_some_and(|d| d > 0.0), "{resting:?}");
    assert!(held.is_safe(), "holding a resting contact: {}", held.summary());
    let lifted = sim
        .preview(&PreviewRequest::new(chunk(INTO_TABLE, REST, 20), 10))
        .unwrap();
    assert!(lifted.is_safe(), "moving off the table: {}", lifted.summary());
    assert!(lifted.contacts.iter().all(|c| c.start_depth_m.is_some()));
}

#[test]
fn a_speed_limit_turns_a_fast_joint_into_a_violation() {
    let mut request = PreviewRequest::new(chunk(REST, SAFE, 2), 10);
    request.limits.max_joint_speed_rad_s = Some(0.1);
    let report = sim().preview(&request).unwrap();
    let speed = report
        .violations
        .iter()
        .find(|v| v.kind == ViolationKind::JointSpeed)
        .expect("a speed violation");
    assert!(speed.value > 0.1, "{speed:?}");
    assert!(speed.to_string().starts_with("joint_speed: "), "{speed}");
}

#[test]
fn closing_the_gripper_on_a_cube_is_a_predicted_stall() {
    let mut sim = sim();
    sim.set_joint_positions(&JointValues::Ordered(OVER_CUBE.to_vec()), true)
        .unwrap();
    let tcp = sim.tcp_pose().pos;
    sim.place_body("cube_red", [tcp[0], tcp[1], 0.815], 0.0).unwrap();
    sim.step(40).unwrap();
    let mut closed = OVER_CUBE;
    closed[5] = -0.17;
    let report = sim
        .preview(&PreviewRequest::new(chunk(OVER_CUBE, closed, 5), 30))
        .unwrap();
    let stall = report.gripper_stall.as_ref().expect("a stall");
    assert!(stall.gap_rad > 0.2, "{stall:?}");
    assert!(stall.blocked_by.contains(&"cube_red".to_owned()), "{stall:?}");
    // The jaws on the cube are a grasp, not a violation.
    assert!(
        report
            .contacts
            .iter()
            .any(|c| c.class == ContactClass::Object && !c.violation)
    );
    assert!(
        !report.violations.iter().any(|v| v.kind == ViolationKind::ObjectContact),
        "{}",
        report.summary()
    );
}

#[test]
fn a_preview_leaves_the_live_twin_as_it_was() {
    let mut sim = sim();
    sim.send_action(&JointValues::Ordered(SAFE.to_vec()), 30).unwrap();
    let (state, watch, robot) = (sim.physics_state(), sim.watch(), sim.robot_state());
    let unsafe_report = preview(&mut sim, INTO_TABLE);
    assert!(!unsafe_report.is_safe());
    let from_measured = StartState {
        qpos: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
        qvel: [0.0, 0.1, 0.0, 0.0, 0.0, 0.0],
        ctrl: None,
    };
    let mut request = PreviewRequest::new(Vec::new(), 5);
    request.start = Some(from_measured);
    let held = sim.preview(&request).unwrap();
    assert!((held.joints[3].final_qpos - 0.4).abs() < 0.05, "{:?}", held.joints[3]);
    assert_eq!(sim.physics_state(), state);
    assert_eq!(sim.watch(), watch);
    assert_eq!(sim.robot_state(), robot);
    // Same request, same report: the scratch copy starts afresh every time.
    assert_eq!(preview(&mut sim, INTO_TABLE), unsafe_report);
}

#[test]
fn every_input_is_checked_before_anything_runs() {
    let mut sim = sim();
    let state = sim.physics_state();
    let start = |qpos: [f64; 6], qvel: [f64; 6]| {
        let mut request = PreviewRequest::new(chunk(REST, SAFE, 2), 0);
        request.start = Some(StartState { qpos, qvel, ctrl: None });
        request
    };
    let mut nan_action = chunk(REST, SAFE, 3);
    nan_action[2] = JointValues::Ordered(vec![0.0, f64::NAN, 0.0, 0.0, 0.0, 0.0]);
    let refused = check_actions(sim.arm(), &nan_action, &sim.ctrl_ranges()).unwrap_err();
    assert!(
        matches!(refused, (2, TwinError::Value(ValueError::NonFinite { .. }))),
        "{refused:?}"
    );
    let mut long_hold = PreviewRequest::new(chunk(REST, SAFE, 2), 0);
    long_hold.substeps_per_action = Some(0);
    let cases: Vec<(PreviewRequest, Expected)> = vec![
        (PreviewRequest::new(nan_action, 0), |e| {
            matches!(e, TwinError::Value(ValueError::NonFinite { .. }))
        }),
        (PreviewRequest::new(vec![JointValues::Ordered(vec![0.0; 5])], 0), |e| {
            matches!(e, TwinError::Value(ValueError::WrongLength { .. }))
        }),
        (PreviewRequest::new(vec![JointValues::Ordered(vec![9.0; 6])], 0), |e| {
            matches!(e, TwinError::Value(ValueError::OutOfRange { .. }))
        }),
        (PreviewRequest::new(Vec::new(), 0), |e| {
            matches!(e, TwinError::CountOutOfRange { .. })
        }),
        (PreviewRequest::new(Vec::new(), u32::MAX), |e| {
            matches!(e, TwinError::CountOutOfRange { .. })
        }),
        (long_hold, |e| matches!(e, TwinError::CountOutOfRange { .. })),
        (start([0.0, 3.0, 0.0, 0.0, 0.0, 0.0], [0.0; 6]), |e| {
            matches!(e, TwinError::Value(ValueError::OutOfRange { .. }))
        }),
        (start([0.0; 6], [0.0, 0.0, f64::INFINITY, 0.0, 0.0, 0.0]), |e| {
            matches!(e, TwinError::Value(ValueError::NonFinite { .. }))
        }),
        (start([0.0; 6], [0.0, 0.0, 1e6, 0.0, 0.0, 0.0]), |e| {
            matches!(e, TwinError::Value(ValueError::OutOfRange { .. }))
        }),
    ];
    for (request, expected) in cases {
        let error = sim.preview(&request).unwrap_err();
        assert!(expected(&error), "{error}");
    }
    assert_eq!(sim.physics_state(), state);
}

#[tokio::test]
async fn the_handle_previews_on_its_own_thread_as_sim_does_leaving_the_twin_as_it_was() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let before = twin.with_sim(|sim| sim.physics_state()).await.unwrap();
    let request = PreviewRequest::new(chunk(REST, INTO_TABLE, 20), 10);
    let report = twin.preview(request.clone()).await.unwrap();
    assert_eq!(report.violations[0].kind, ViolationKind::TableContact);
    assert_eq!(report, sim().preview(&request).unwrap(), "the same report as on a Sim");
    assert_eq!(twin.with_sim(|sim| sim.physics_state()).await.unwrap(), before);
    twin.shutdown();
}

#[tokio::test]
async fn long_previews_leave_the_physics_thread_free() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let finished = std::sync::Mutex::new(Vec::new());
    // The longest preview accepted: 2000 physics steps.
    let longest = || async {
        twin.preview(PreviewRequest::new(chunk(REST, SAFE, 100), 100))
            .await
            .unwrap();
        finished.lock().unwrap().push("preview");
    };
    // Reaches the physics thread after the four previews' own short jobs there.
    let read = async {
        twin.with_sim(|sim| sim.time()).await.unwrap();
        finished.lock().unwrap().push("read");
    };
    tokio::join!(longest(), longest(), longest(), longest(), read);
    let finished = finished.into_inner().unwrap();
    assert_eq!(finished.len(), 5);
    assert_eq!(finished[0], "read", "the read waited for a preview: {finished:?}");
    twin.shutdown();
}
