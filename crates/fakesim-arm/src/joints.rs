//! The SO-101 joint table: servo ids, labels, how callers may name a joint, and the six
//! joints as a closed set ([`Joint`]), so per-joint arrays never need a fallible index.

use serde::{Serialize, Serializer};

/// Name of the robot in qualified joint names such as `so101/shoulder_pan`.
pub const ROBOT_NAME: &str = "so101";

/// One arm joint as the servo bus, the twin and datasets know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JointSpec {
    /// Servo id on the bus, also the MuJoCo joint and actuator name.
    pub id: &'static str,
    /// The label LeRobot drivers and datasets use.
    pub label: &'static str,
}

/// The six joints in action-key order (servo id order).
pub const ARM_JOINTS: [JointSpec; 6] = [
    JointSpec {
        id: "1",
        label: "shoulder_pan",
    },
    JointSpec {
        id: "2",
        label: "shoulder_lift",
    },
    JointSpec {
        id: "3",
        label: "elbow_flex",
    },
    JointSpec {
        id: "4",
        label: "wrist_flex",
    },
    JointSpec {
        id: "5",
        label: "wrist_roll",
    },
    JointSpec {
        id: "6",
        label: "gripper",
    },
];

/// Index of the gripper joint in [`ARM_JOINTS`].
pub const GRIPPER_INDEX: usize = 5;

/// Finds the arm joint a caller means: id or label, any case, bare or `so101/`-qualified.
pub fn resolve_joint(key: &str) -> Option<usize> {
    let bare = match key.split_once('/') {
        Some((robot, rest)) if robot.eq_ignore_ascii_case(ROBOT_NAME) => rest,
        Some(_) => return None,
        None => key,
    };
    let bare = bare.trim();
    ARM_JOINTS
        .iter()
        .position(|j| j.id == bare || j.label.eq_ignore_ascii_case(bare))
}

/// The names a caller may use, for error messages: `1 (shoulder_pan)`, ...
pub fn known_joint_names() -> Vec<String> {
    ARM_JOINTS.iter().map(|j| format!("{} ({})", j.id, j.label)).collect()
}

/// One of the six SO-101 joints, in the twin's action-key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Joint {
    /// Twin joint `"1"`, servo 1.
    ShoulderPan,
    /// Twin joint `"2"`, servo 2.
    ShoulderLift,
    /// Twin joint `"3"`, servo 3.
    ElbowFlex,
    /// Twin joint `"4"`, servo 4.
    WristFlex,
    /// Twin joint `"5"`, servo 5.
    WristRoll,
    /// Twin joint `"6"`, servo 6.
    Gripper,
}

impl Joint {
    /// All joints in action-key order.
    pub const ALL: [Joint; 6] = [
        Joint::ShoulderPan,
        Joint::ShoulderLift,
        Joint::ElbowFlex,
        Joint::WristFlex,
        Joint::WristRoll,
        Joint::Gripper,
    ];

    /// Position in action-key order (0..6), the index of every per-joint array.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The joint at an action-key index.
    pub fn from_index(index: usize) -> Option<Joint> {
        Self::ALL.get(index).copied()
    }

    /// The twin's joint name, `"1"`..`"6"`.
    pub fn twin_id(self) -> &'static str {
        self.spec().id
    }

    /// The LeRobot label, e.g. `shoulder_pan`.
    pub fn label(self) -> &'static str {
        self.spec().label
    }

    /// The servo id the SO-101 default mapping gives this joint (1..=6).
    pub fn default_servo_id(self) -> u8 {
        // index() < 6, so this always fits.
        u8::try_from(self.index() + 1).unwrap_or(u8::MAX)
    }

    fn spec(self) -> &'static JointSpec {
        // ALL and ARM_JOINTS have the same six entries (checked by a test).
        &ARM_JOINTS[self.index()]
    }
}

impl std::fmt::Display for Joint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

impl Serialize for Joint {
    /// A joint serialises as its label.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_ids_labels_any_case_and_qualified() {
        assert_eq!(resolve_joint("1"), Some(0));
        assert_eq!(resolve_joint("6"), Some(5));
        assert_eq!(resolve_joint("Elbow_Flex"), Some(2));
        assert_eq!(resolve_joint("SO101/wrist_roll"), Some(4));
        assert_eq!(resolve_joint("so101/4"), Some(3));
    }

    #[test]
    fn refuses_unknown_and_other_robots() {
        assert_eq!(resolve_joint("7"), None);
        assert_eq!(resolve_joint("elbow"), None);
        assert_eq!(resolve_joint("panda/elbow_flex"), None);
        assert_eq!(resolve_joint(""), None);
    }

    #[test]
    fn joints_follow_the_twin_table_in_order() {
        assert_eq!(Joint::ALL.len(), ARM_JOINTS.len());
        for (i, joint) in Joint::ALL.iter().enumerate() {
            assert_eq!(joint.index(), i);
            assert_eq!(Joint::from_index(i), Some(*joint));
            assert_eq!(joint.twin_id(), ARM_JOINTS[i].id);
            assert_eq!(joint.label(), ARM_JOINTS[i].label);
            assert_eq!(usize::from(joint.default_servo_id()), i + 1);
        }
        assert_eq!(Joint::from_index(6), None);
        assert_eq!(Joint::Gripper.to_string(), "gripper");
    }
}
