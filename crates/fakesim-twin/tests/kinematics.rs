//! Forward kinematics of the twins against the published SO-101 and SO-100 chains, computed here
//! with nalgebra from the tables of body frames, independently of MuJoCo.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::sim::FrameKind;
use fakesim_twin::{ArmType, JointValues, Scene, Sim};
use nalgebra::{Isometry3, Quaternion, Translation3, Unit, UnitQuaternion, Vector3};

/// Random joint configurations each chain is checked at (the first is all zeros).
const CONFIGURATIONS: usize = 200;

/// One link of a published chain: the body, its frame in the parent's (position, orientation)
/// and the axis of its hinge in its own frame.
struct Link {
    body: &'static str,
    pos: [f64; 3],
    rot: UnitQuaternion<f64>,
    axis: [f64; 3],
}

/// A published orientation: a quaternion w x y z as written, unnormalised.
fn quat([w, x, y, z]: [f64; 4]) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z))
}

/// A published orientation: MuJoCo's default Euler angles, rotations about x, then the new y,
/// then the new z.
fn euler([x, y, z]: [f64; 3]) -> UnitQuaternion<f64> {
    UnitQuaternion::from_axis_angle(&Vector3::x_axis(), x)
        * UnitQuaternion::from_axis_angle(&Vector3::y_axis(), y)
        * UnitQuaternion::from_axis_angle(&Vector3::z_axis(), z)
}

/// The SO-101 (TheRobotStudio's new calibration as rounded by MuJoCo Menagerie); every hinge
/// turns about its body's z.
fn so101_chain() -> Vec<Link> {
    let link = |body, pos, q| Link {
        body,
        pos,
        rot: quat(q),
        axis: [0.0, 0.0, 1.0],
    };
    vec![
        link("shoulder", [0.0388353, 0.0, 0.0624], [0.0, 0.0, -1.0, 0.0]),
        link("upper_arm", [-0.0303992, -0.0182778, -0.0542], [1.0, -1.0, -1.0, -1.0]),
        link("lower_arm", [-0.11257, -0.028, 0.0], [1.0, 0.0, 0.0, 1.0]),
        link("wrist", [-0.1349, 0.0052, 0.0], [1.0, 0.0, 0.0, -1.0]),
        link(
            "gripper",
            [5.55e-17, -0.0611, 0.0181],
            [0.0172091, -0.0172091, 0.706897, 0.706897],
        ),
        link("moving_jaw", [0.0202, 0.0188, -0.0234], [1.0, 1.0, 0.0, 0.0]),
    ]
}

/// The quarter turn of the SO-100's published Euler angles, as written (a hair under π/2).
#[allow(clippy::approx_constant)]
const QUARTER: f64 = 1.57079;

/// The SO-100 (MuJoCo Menagerie trs_so_arm100, from TheRobotStudio's SO-ARM100 URDF).
fn so100_chain() -> Vec<Link> {
    let (x, y, z) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
    let link = |body, pos, rot, axis| Link { body, pos, rot, axis };
    vec![
        link(
            "Rotation_Pitch",
            [0.0, -0.0452, 0.0165],
            quat([0.707105, 0.707108, 0.0, 0.0]),
            y,
        ),
        link("Upper_Arm", [0.0, 0.1025, 0.0306], euler([QUARTER, 0.0, 0.0]), x),
        link("Lower_Arm", [0.0, 0.11257, 0.028], euler([-QUARTER, 0.0, 0.0]), x),
        link(
            "Wrist_Pitch_Roll",
            [0.0, 0.0052, 0.1349],
            euler([-QUARTER, 0.0, 0.0]),
            x,
        ),
        link("Fixed_Jaw", [0.0, -0.0601, 0.0], euler([0.0, QUARTER, 0.0]), y),
        link(
            "Moving_Jaw",
            [-0.0202, -0.0244, 0.0],
            quat([1.34924e-11, -3.67321e-06, 1.0, -3.67321e-06]),
            z,
        ),
    ]
}

/// The SO-101's tool centre point in the gripper body frame (published gripper frame).
const TCP_IN_GRIPPER: [f64; 3] = [0.012, -0.000218, -0.098127];
/// The SO-100's tool centre point in the Fixed_Jaw frame: between the jaw tips, 18 mm from the
/// fixed jaw's face (assets/README.md).
const TCP_IN_FIXED_JAW: [f64; 3] = [-0.0101, -0.0995, 0.0];

fn frame(pos: [f64; 3], rot: UnitQuaternion<f64>) -> Isometry3<f64> {
    Isometry3::from_parts(Translation3::new(pos[0], pos[1], pos[2]), rot)
}

/// World positions of every body origin (= joint anchor), and of the TCP on body `tool`.
fn published_chain(
    chain: &[Link],
    base: Isometry3<f64>,
    q: &[f64; 6],
    tool: &str,
    tcp: [f64; 3],
) -> (Vec<(&'static str, Vector3<f64>)>, Vector3<f64>) {
    let mut pose = base;
    let mut anchors = Vec::new();
    let mut tool_pose = base;
    for (link, angle) in chain.iter().zip(q) {
        pose *= frame(link.pos, link.rot);
        anchors.push((link.body, pose.translation.vector));
        pose *= UnitQuaternion::from_axis_angle(&Unit::new_normalize(Vector3::from(link.axis)), *angle);
        if link.body == tool {
            tool_pose = pose;
        }
    }
    let tcp = tool_pose * nalgebra::Point3::from(Vector3::from(tcp));
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

/// Sets `scene`'s arm to [`CONFIGURATIONS`] poses across its ranges; at each, every body origin
/// and the TCP (site and state) lie within a millimetre of the chain's.
fn matches_the_published_chain(scene: &Scene, base_body: &str, chain: &[Link], tool: &str, tcp_in_tool: [f64; 3]) {
    let mut sim = Sim::load(scene, 4).unwrap();
    let frames = sim.forward_kinematics(Some(base_body)).unwrap();
    let base_pose = frames[0].pose;
    let base = frame(base_pose.pos, quat(base_pose.quat));
    let configs = configurations(&sim, CONFIGURATIONS);
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
        let (anchors, tcp) = published_chain(chain, base, q, tool, tcp_in_tool);
        assert_eq!(anchors.len(), 6);
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
fn tcp_and_joint_anchors_match_the_published_chain_within_a_millimetre() {
    matches_the_published_chain(&Scene::Tabletop, "base", &so101_chain(), "gripper", TCP_IN_GRIPPER);
}

#[test]
fn so100_tcp_and_joint_anchors_match_the_published_chain_within_a_millimetre() {
    let scene = Scene::builtin(ArmType::So100, true);
    matches_the_published_chain(&scene, "Base", &so100_chain(), "Fixed_Jaw", TCP_IN_FIXED_JAW);
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
