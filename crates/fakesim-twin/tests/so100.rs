//! The SO-100 twin beside the SO-101: its scenes load with the arm table's joint names and
//! LeRobot labels, its home pose is the SO-101's TCP pose, it holds that pose, its jaws open and
//! close as the SO-101's, and the preview grasps a cube with it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::preview::{ContactClass, PreviewRequest};
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{ArmType, JointValues, Scene, Sim};
use nalgebra::Vector3;

/// The published SO-100 joint ranges (Menagerie trs_so_arm100, 2025-06-09), action order; the
/// elbow's upper end is 3.14 as written, not π.
#[allow(clippy::approx_constant)]
const RANGES: [(f64, f64); 6] = [
    (-1.92, 1.92),
    (-3.32, 0.174),
    (-0.174, 3.14),
    (-1.66, 1.66),
    (-2.79, 2.79),
    (-0.174, 1.75),
];
/// Jaws pointing straight down, the TCP at the height of a cube's centre 20 cm in front of the
/// base, gripper open.
const OVER_CUBE: [f64; 6] = [0.0, -1.873, 2.373, 1.07, 0.0, 1.0];

fn so100(objects: bool) -> Sim {
    Sim::load(&Scene::builtin(ArmType::So100, objects), DEFAULT_SUBSTEPS_PER_TICK).unwrap()
}

fn pose(sim: &mut Sim, q: [f64; 6]) {
    sim.set_joint_positions(&JointValues::Ordered(q.to_vec()), true)
        .unwrap();
}

#[test]
fn the_so100_scenes_carry_its_joint_names_labels_and_published_ranges() {
    assert_eq!(Scene::builtin(ArmType::So101, true), Scene::Tabletop);
    assert_eq!(Scene::builtin(ArmType::So101, false), Scene::EmptyTable);
    let so101 = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK)
        .unwrap()
        .model_info();
    for objects in [true, false] {
        let mut sim = so100(objects);
        let info = sim.model_info();
        assert_eq!(
            info.action_keys,
            ["Rotation", "Pitch", "Elbow", "Wrist_Pitch", "Wrist_Roll", "Jaw"]
        );
        for ((joint, spec), (lo, hi)) in info.joints.iter().zip(&ArmType::So100.spec().joints).zip(RANGES) {
            assert_eq!((joint.id.as_str(), joint.label.as_str()), (spec.name, spec.label));
            assert_eq!((joint.range.lo, joint.range.hi), (lo, hi), "{}", joint.id);
            assert_eq!((joint.ctrl_range.lo, joint.ctrl_range.hi), (lo, hi), "{}", joint.id);
        }
        assert_eq!((&info.cameras, info.timestep), (&so101.cameras, so101.timestep));
        assert_eq!(info.max_image, so101.max_image);
        let base = sim.forward_kinematics(Some("Base")).unwrap()[0].pose.pos;
        assert!((base[2] - 0.80).abs() < 1e-9, "base at {base:?}");
        assert_eq!(sim.body_position("cube_red").is_ok(), objects);
    }
}

#[test]
fn each_arm_s_home_puts_the_tcp_where_the_so101_s_does_pointing_the_same_way() {
    let mut reference = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK).unwrap();
    pose(&mut reference, ArmType::So101.spec().home);
    let expected = reference.tcp_pose();
    let mut sim = so100(true);
    pose(&mut sim, ArmType::So100.spec().home);
    let tcp = sim.tcp_pose();
    let off = (Vector3::from(tcp.pos) - Vector3::from(expected.pos)).norm();
    assert!(off < 5e-3, "TCP {:?} against {:?}", tcp.pos, expected.pos);
    let turn = tcp.rotation().rotation_to(&expected.rotation()).angle();
    assert!(turn < 0.05, "TCP turned {turn} rad from the SO-101's");
}

#[test]
fn the_so100_holds_its_home_pose_against_gravity_clear_of_the_table() {
    let mut sim = so100(true);
    let home = ArmType::So100.spec().home;
    pose(&mut sim, home);
    sim.step(400).unwrap();
    for (i, (q, want)) in sim.arm_qpos().iter().zip(home).enumerate() {
        assert!((q - want).abs() < 0.02, "joint {i} sagged to {q} from {want}");
    }
    let table: Vec<_> = sim
        .contacts()
        .into_iter()
        .filter(|c| c.geom1 == "table_top" || c.geom2 == "table_top")
        .filter(|c| c.dist < 0.0)
        .collect();
    assert!(
        table.iter().all(|c| ["cube_red", "cube_blue", "bowl_floor"]
            .iter()
            .any(|o| [&c.geom1, &c.geom2].contains(&&o.to_string()))),
        "{table:?}"
    );
}

#[test]
fn the_so100_jaws_close_to_a_few_millimetres_open_wide_and_are_parallel_at_3_cm() {
    let mut sim = so100(false);
    let mut opening_at = |jaw: f64| {
        let mut q = ArmType::So100.spec().home;
        q[5] = jaw;
        pose(&mut sim, q);
        sim.gripper_opening_m()
    };
    let closed = opening_at(-0.174);
    assert!((0.001..0.008).contains(&closed), "closed at {closed} m");
    let parallel = opening_at(0.197);
    assert!((parallel - 0.030).abs() < 1e-3, "{parallel} m at 0.197 rad");
    let open = opening_at(1.75);
    assert!(open > 0.10, "open at {open} m");
}

#[test]
fn closing_the_so100_gripper_on_a_cube_is_a_predicted_stall() {
    let mut sim = so100(true);
    pose(&mut sim, OVER_CUBE);
    let tcp = sim.tcp_pose().pos;
    assert!((tcp[2] - 0.815).abs() < 2e-3, "TCP at {tcp:?}");
    sim.place_body("cube_red", [tcp[0], tcp[1], 0.815], 0.0).unwrap();
    sim.step(40).unwrap();
    let mut closed = OVER_CUBE;
    closed[5] = -0.17;
    let actions = (1..=5)
        .map(|k| {
            let mut q = OVER_CUBE;
            q[5] += (closed[5] - OVER_CUBE[5]) * f64::from(k) / 5.0;
            JointValues::Ordered(q.to_vec())
        })
        .collect();
    let report = sim.preview(&PreviewRequest::new(actions, 30)).unwrap();
    let stall = report.gripper_stall.as_ref().expect("a stall");
    assert!(stall.blocked_by.contains(&"cube_red".to_owned()), "{stall:?}");
    assert!(
        report
            .contacts
            .iter()
            .any(|c| c.class == ContactClass::Object && !c.violation),
        "{:?}",
        report.contacts
    );
    assert!(report.is_safe(), "{}", report.summary());
}
