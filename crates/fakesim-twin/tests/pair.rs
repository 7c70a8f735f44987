//! Two arms in one twin: the pair scene names each side's joints under its side, the per-arm
//! verbs act on the arm in focus only, and a preview of one arm sees the other as a contact.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_arm::{ArmType, Side};
use fakesim_twin::preview::{ContactClass, PreviewRequest, ViolationKind};
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{JointValues, Scene, Sim, TwinConfig, TwinError, TwinHandle};

fn pair(arm: ArmType) -> Sim {
    Sim::load(&Scene::Pair { arm, objects: true }, DEFAULT_SUBSTEPS_PER_TICK).unwrap()
}

fn named(pairs: &[(&str, f64)]) -> JointValues {
    JointValues::Named(pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect())
}

#[test]
fn each_side_of_a_pair_has_its_own_namespaced_joints() {
    for arm in ArmType::ALL {
        let mut sim = pair(arm);
        assert_eq!(sim.arms(), [arm.on(Side::Left), arm.on(Side::Right)]);
        for side in Side::BOTH {
            sim.focus(side.index()).unwrap();
            let info = sim.model_info();
            let prefix = format!("{side}/");
            assert_eq!(info.joints.len(), 6);
            for joint in &info.joints {
                assert!(joint.id.starts_with(&prefix), "{}: {}", arm, joint.id);
                assert!(joint.label.starts_with(&prefix), "{}: {}", arm, joint.label);
            }
        }
        assert!(matches!(sim.focus(2), Err(TwinError::Scene(_))));
    }
}

#[test]
fn a_write_to_one_side_moves_that_arm_only() {
    let mut sim = pair(ArmType::So101);
    sim.focus(Side::Left.index()).unwrap();
    let left_before = sim.arm_qpos();
    let tcp_left = sim.tcp_pose().pos;
    sim.focus(Side::Right.index()).unwrap();
    let tcp_right = sim.tcp_pose().pos;
    assert!(
        (tcp_left[1] - tcp_right[1] - 0.40).abs() < 1e-9,
        "{tcp_left:?} {tcp_right:?}"
    );
    sim.set_joint_positions(&named(&[("right/shoulder_pan", 0.5), ("RIGHT/3", 0.2)]), true)
        .unwrap();
    assert_eq!(sim.arm_qpos()[0], 0.5);
    assert_eq!(sim.arm_qpos()[2], 0.2);
    let refused = sim.set_joint_positions(&named(&[("left/shoulder_pan", 0.5)]), true);
    assert!(refused.is_err(), "the right arm took the left's joint: {refused:?}");
    sim.focus(Side::Left.index()).unwrap();
    assert_eq!(sim.arm_qpos(), left_before, "the left arm moved");
}

#[test]
fn a_preview_of_one_arm_swinging_into_the_other_is_an_arm_contact_naming_both_links() {
    let mut sim = pair(ArmType::So101);
    // The right arm turned in towards the middle of the table (a negative pan), held there.
    sim.focus(Side::Right.index()).unwrap();
    sim.set_joint_positions(&named(&[("right/shoulder_pan", -1.0)]), true)
        .unwrap();
    sim.focus(Side::Left.index()).unwrap();
    let from = sim.arm_ctrl();
    let chunk: Vec<JointValues> = (1..=20)
        .map(|k| {
            let mut to = from;
            to[0] = f64::from(k) / 20.0;
            JointValues::Ordered(to.to_vec())
        })
        .collect();
    let report = sim.preview(&PreviewRequest::new(chunk, 10)).unwrap();
    let contact = report
        .contacts
        .iter()
        .find(|c| c.class == ContactClass::OtherArm)
        .unwrap_or_else(|| panic!("no contact with the other arm: {}", report.summary()));
    assert!(contact.link.starts_with("left/"), "{contact:?}");
    assert!(contact.other_body.starts_with("right/"), "{contact:?}");
    let violation = report
        .violations
        .iter()
        .find(|v| v.kind == ViolationKind::ArmContact)
        .expect("an arm contact violation");
    assert!(violation.links[0].starts_with("left/") && violation.links[1].starts_with("right/"));
    assert!(report.summary().contains("arm_contact"), "{}", report.summary());
    assert!(!report.is_safe());
    // The same chunk with the right arm out of the way is safe.
    let mut sim = pair(ArmType::So101);
    let report = sim
        .preview(&PreviewRequest::new(
            (1..=20)
                .map(|k| {
                    let mut to = from;
                    to[0] = f64::from(k) / 20.0;
                    JointValues::Ordered(to.to_vec())
                })
                .collect(),
            10,
        ))
        .unwrap();
    assert!(
        !report.contacts.iter().any(|c| c.class == ContactClass::OtherArm),
        "{}",
        report.summary()
    );
}

#[tokio::test]
async fn a_handle_on_one_side_reads_and_writes_that_side() {
    let twin = TwinHandle::spawn(TwinConfig {
        scene: Scene::Pair {
            arm: ArmType::So101,
            objects: false,
        },
        ..TwinConfig::default()
    })
    .unwrap();
    assert_eq!(twin.arms().len(), 2);
    let (left, right) = (twin.on(Side::Left).unwrap(), twin.on(Side::Right).unwrap());
    assert_eq!(right.arm().side, Some(Side::Right));
    right
        .try_with_sim(|sim| sim.set_joint_positions(&JointValues::Ordered(vec![0.3, 0.0, 0.0, 0.0, 0.0, 0.0]), true))
        .await
        .unwrap();
    assert_eq!(right.with_sim(|sim| sim.arm_qpos()[0]).await.unwrap(), 0.3);
    assert_eq!(left.with_sim(|sim| sim.arm_qpos()[0]).await.unwrap(), 0.0);
    let single = TwinHandle::spawn(TwinConfig::default()).unwrap();
    assert!(single.on(Side::Left).is_none());
    twin.shutdown();
    single.shutdown();
}
