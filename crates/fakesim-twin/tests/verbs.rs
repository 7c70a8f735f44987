//! The twin's joint-space verbs: hold semantics, refusals that change nothing, saved states,
//! determinism, contacts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::{JointValues, Scene, Sim, TwinError};

/// A call on the twin that should be refused.
type Call = Box<dyn Fn(&mut Sim) -> Result<(), TwinError>>;

fn sim() -> Sim {
    Sim::load(&Scene::Tabletop, 4).unwrap()
}

fn named(pairs: &[(&str, f64)]) -> JointValues {
    JointValues::Named(pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
}

#[test]
fn hold_keeps_the_pose_after_stepping_and_no_hold_is_pulled_back() {
    let mut held = sim();
    let report = held
        .set_joint_positions(&named(&[("elbow_flex", 0.6), ("2", -0.3)]), true)
        .unwrap();
    assert!(report.pulled_back.is_empty());
    held.step(200).unwrap();
    let q = held.arm_qpos();
    assert!((q[2] - 0.6).abs() < 0.05, "held elbow drifted to {}", q[2]);
    assert!((q[1] + 0.3).abs() < 0.05, "held shoulder_lift drifted to {}", q[1]);

    let mut loose = sim();
    let start = loose.arm_qpos();
    let report = loose
        .set_joint_positions(&named(&[("ELBOW_FLEX", 0.6)]), false)
        .unwrap();
    assert_eq!(report.pulled_back, vec!["elbow_flex".to_owned()]);
    assert!((loose.arm_qpos()[2] - 0.6).abs() < 1e-12, "teleport is immediate");
    loose.step(200).unwrap();
    assert!((loose.arm_qpos()[2] - start[2]).abs() < 0.05, "servo pulls it back");
}

#[test]
fn refusals_change_nothing() {
    let mut sim = sim();
    sim.step(10).unwrap();
    let before = sim.physics_state();
    let bad_calls: Vec<Call> = vec![
        Box::new(|s| {
            s.set_joint_positions(&named(&[("1", 0.1), ("bogus", 0.2)]), true)
                .map(drop)
        }),
        Box::new(|s| {
            s.set_joint_positions(&named(&[("1", 0.1), ("3", f64::NAN)]), true)
                .map(drop)
        }),
        Box::new(|s| {
            s.set_joint_positions(&named(&[("1", 0.1), ("shoulder_pan", -96.2)]), true)
                .map(drop)
        }),
        Box::new(|s| {
            s.set_joint_positions(&JointValues::Ordered(vec![0.0; 7]), false)
                .map(drop)
        }),
        Box::new(|s| s.set_joint_velocities(&named(&[("2", f64::INFINITY)]))),
        Box::new(|s| s.send_action(&JointValues::Ordered(vec![0.0; 5]), 1)),
        Box::new(|s| s.send_action(&named(&[("gripper", 0.1)]), 0)),
        Box::new(|s| s.send_action(&named(&[("gripper", 3.0)]), 1)),
        Box::new(|s| s.step(100_001)),
        Box::new(|s| s.load_state("never-saved")),
    ];
    for (i, call) in bad_calls.iter().enumerate() {
        assert!(call(&mut sim).is_err(), "call {i} should be refused");
        assert_eq!(sim.physics_state(), before, "call {i} changed the state");
    }
}

#[test]
fn range_refusal_names_joint_unit_and_degree_conversion() {
    let mut sim = sim();
    let err = sim
        .set_joint_positions(&named(&[("shoulder_pan", -96.2)]), true)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "shoulder_pan=-96.2 outside [-1.92, 1.92] rad (radians, not degrees: -96.2 deg = -1.679 rad)"
    );
}

#[test]
fn step_zero_is_a_no_op_and_the_cap_is_accepted() {
    let mut sim = sim();
    let before = sim.physics_state();
    sim.step(0).unwrap();
    assert_eq!(sim.physics_state(), before);
    sim.step(1).unwrap();
    assert!(sim.time() > 0.0);
}

#[test]
fn send_action_by_vector_and_mapping_drive_the_servos() {
    let mut sim = sim();
    let mut targets = sim.arm_ctrl().to_vec();
    targets[0] = 0.5;
    sim.send_action(&JointValues::Ordered(targets), 100).unwrap();
    assert!(
        (sim.arm_qpos()[0] - 0.5).abs() < 0.05,
        "pan reached {}",
        sim.arm_qpos()[0]
    );
    sim.send_action(&named(&[("so101/shoulder_pan", -0.5)]), 100).unwrap();
    assert!(
        (sim.arm_qpos()[0] + 0.5).abs() < 0.05,
        "pan reached {}",
        sim.arm_qpos()[0]
    );
}

#[test]
fn save_and_load_round_trip_exactly() {
    let mut sim = sim();
    sim.send_action(&named(&[("1", 0.4), ("3", 0.3)]), 20).unwrap();
    sim.save_state("mid");
    let saved = sim.physics_state();
    sim.step(50).unwrap();
    sim.send_action(&named(&[("gripper", 1.0)]), 20).unwrap();
    assert_ne!(sim.physics_state(), saved);
    sim.load_state("mid").unwrap();
    assert_eq!(sim.physics_state(), saved);
    let mut continued = sim.physics_state();
    sim.step(10).unwrap();
    continued.clone_from(&sim.physics_state());
    sim.load_state("mid").unwrap();
    sim.step(10).unwrap();
    assert_eq!(sim.physics_state(), continued, "replay from a saved state is exact");
}

#[test]
fn same_calls_give_the_same_state_bit_for_bit() {
    let run = || {
        let mut sim = sim();
        sim.set_joint_positions(&named(&[("2", -0.2)]), true).unwrap();
        sim.send_action(&JointValues::Ordered(vec![0.3, -0.5, 0.6, 0.2, 0.1, 0.8]), 37)
            .unwrap();
        sim.set_joint_velocities(&named(&[("wrist_roll", 0.5)])).unwrap();
        sim.step(113).unwrap();
        sim.physics_state()
    };
    let a = run();
    let b = run();
    assert_eq!(a.len(), b.len());
    assert!(a.iter().zip(b.iter()).all(|(x, y)| x.to_bits() == y.to_bits()));
}

#[test]
fn resting_objects_touch_the_table_and_contacts_are_reported() {
    let mut sim = sim();
    sim.step(100).unwrap();
    let contacts = sim.contacts();
    assert!(
        contacts.iter().any(|c| c.active),
        "objects resting on the table make active contacts: {contacts:?}"
    );
    assert!(contacts.iter().all(|c| !c.active || c.dist < 0.01));
}

#[test]
fn gripper_opening_grows_when_the_gripper_opens() {
    let mut sim = sim();
    let ranges = sim.ctrl_ranges();
    sim.send_action(&named(&[("gripper", ranges[5].lo)]), 200).unwrap();
    let closed = sim.gripper_opening_m();
    sim.send_action(&named(&[("gripper", ranges[5].hi)]), 200).unwrap();
    let open = sim.gripper_opening_m();
    assert!(open > closed + 0.03, "closed {closed} m, open {open} m");
}
