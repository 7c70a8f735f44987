//! Forward kinematics of the twin against the published SO-101 chain, computed here with
//! nalgebra from the table of body frames, independently of MuJoCo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::sim::FrameKind;
use fakesim_twin::{JointValues, Scene, Sim};
use nalgebra::{Isometry3, Quaternion, Translation3, UnitQuaternion, Vector3};

/// (body, parent-frame position, parent-frame quaternion w x y z as published, unnormalised).
const CHAIN: [(&str, [f64; 3], [f64; 4]); 6] = [
    ("shoulder", [0.0388353, 0.0, 0.0624], [0.0, 0.0, -1.0, 0.0]),
    ("upper_arm", [-0.0303992, -0.0182778, -0.0542], [1.0, -1.0, -1.0, -1.0]),
    ("lower_arm", [-0.11257, -0.028, 0.0], [1.0, 0.0, 0.0, 1.0]),
    ("wrist", [-0.1349, 0.0052, 0.0], [1.0, 0.0, 0.0, -1.0]),
    (
        "gripper",
        [5.55e-17, -0.0611, 0.0181],
        [0.0172091, -0.0172091, 0.706897, 0.706897],
    ),
    ("moving_jaw", [0.0202, 0.0188, -0.0234], [1.0, 1.0, 0.0, 0.0]),
];

/// The tool centre point in the gripper body frame (published gripper frame).
const TCP_IN_GRIPPER: [f64; 3] = [0.012, -0.000218, -0.098127];

fn frame(pos: [f64; 3], quat: [f64; 4]) -> Isometry3<f64> {
    let [w, x, y, z] = quat;
    Isometry3::from_parts(
        Translation3::new(pos[0], pos[1], pos[2]),
        UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z)),
    )
}

/// World positions of every body origin (= joint anchor) and of the TCP.
fn published_chain(base: Isometry3<f64>, q: &[f64; 6]) -> (Vec<(&'static str, Vector3<f64>)>, Vector3<f64>) {
    let mut pose = base;
    let mut anchors = Vec::new();
    let mut gripper = base;
    for (i, (name, pos, quat)) in CHAIN.iter().enumerate() {
        pose *= frame(*pos, *quat);
        anchors.push((*name, pose.translation.vector));
        pose *= UnitQuaternion::from_axis_angle(&Vector3::z_axis(), q[i]);
        if *name == "gripper" {
            gripper = pose;
        }
    }
    let tcp = gripper * nalgebra::Point3::from(Vector3::from(TCP_IN_GRIPPER));
    (anchors, tcp.coords)
}

fn configurations(sim: &Sim, count: usize) -> Vec<[f64; 6]> {
    let ranges = sim.joint_ranges();
    let mut seed: u64 = 0x5eed_0101;
    let mut next = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut out = vec![[0.0; 6]];
    while out.len() < count {
        out.push(std::array::from_fn(|i| {
            ranges[i].lo + next() * (ranges[i].hi - ranges[i].lo)
        }));
    }
    out
}

#[test]
fn tcp_and_joint_anchors_match_the_published_chain_within_a_millimetre() {
    let mut sim = Sim::load(&Scene::Tabletop, 4).unwrap();
    let frames = sim.forward_kinematics(Some("base")).unwrap();
    let base_pose = frames[0].pose;
    let base = frame(base_pose.pos, base_pose.quat);
    let configs = configurations(&sim, 30);
    assert!(configs.len() >= 25);
    for q in &configs {
        sim.set_joint_positions(&JointValues::Ordered(q.to_vec()), true)
            .unwrap();
        let frames = sim.forward_kinematics(None).unwrap();
        let world = |name: &str, kind: FrameKind| {
            let f = frames
                .iter()
                .find(|f| f.name == name && f.kind == kind)
                .unwrap_or_else(|| panic!("no {name}"));
            Vector3::from(f.pose.pos)
        };
        let (anchors, tcp) = published_chain(base, q);
        for (name, expected) in anchors {
            let error = (world(name, FrameKind::Body) - expected).norm();
            assert!(error < 1e-3, "{name} off by {error} m at q={q:?}");
        }
        let error = (world("tcp", FrameKind::Site) - tcp).norm();
        assert!(error < 1e-3, "tcp off by {error} m at q={q:?}");
        let tcp_state = Vector3::from(sim.tcp_pose().pos);
        assert!((tcp_state - tcp).norm() < 1e-3);
    }
}

#[test]
fn base_stands_on_the_table_top() {
    let mut sim = Sim::load(&Scene::Tabletop, 4).unwrap();
    let base = sim.forward_kinematics(Some("so101/base")).unwrap();
    assert!(
        (base[0].pose.pos[2] - 0.80).abs() < 1e-6,
        "base z = {}",
        base[0].pose.pos[2]
    );
}

#[test]
fn jacobian_columns_are_named_by_dof_and_match_finite_differences() {
    let mut sim = Sim::load(&Scene::Tabletop, 4).unwrap();
    let q = [0.3, -0.4, 0.5, 0.2, -0.1, 0.4];
    sim.set_joint_positions(&JointValues::Ordered(q.to_vec()), true)
        .unwrap();
    let jac = sim.jacobian("tcp").unwrap();
    let nv = jac.dof_names.len();
    assert_eq!(&jac.dof_names[..6], &["1", "2", "3", "4", "5", "6"]);
    assert!(
        jac.dof_names.iter().any(|n| n.starts_with("cube_red_joint[")),
        "{:?}",
        jac.dof_names
    );
    let h = 1e-6;
    for j in 0..5 {
        let mut plus = q;
        plus[j] += h;
        let before = Vector3::from(sim.tcp_pose().pos);
        sim.set_joint_positions(&JointValues::Ordered(plus.to_vec()), true)
            .unwrap();
        let after = Vector3::from(sim.tcp_pose().pos);
        sim.set_joint_positions(&JointValues::Ordered(q.to_vec()), true)
            .unwrap();
        let numeric = (after - before) / h;
        for r in 0..3 {
            let analytic = jac.position[r * nv + j];
            assert!(
                (analytic - numeric[r]).abs() < 1e-4,
                "dof {j} row {r}: {analytic} vs {}",
                numeric[r]
            );
        }
    }
}
