//! The SO-101 joint table: servo ids, labels, and how callers may name a joint.

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
}
