//! The six joints of an SO arm as a closed set ([`Joint`]), so per-joint arrays never need a
//! fallible index: their LeRobot labels and servo ids, the same on every arm. What a model
//! names a joint comes from the arm ([`crate::arms::ArmSpec::joint_name`]).

use serde::{Serialize, Serializer};

/// Index of the gripper joint in action-key order.
pub const GRIPPER_INDEX: usize = Joint::Gripper.index();

/// One of the six joints of an SO arm, in the twin's action-key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Joint {
    /// `shoulder_pan`, servo 1.
    ShoulderPan,
    /// `shoulder_lift`, servo 2.
    ShoulderLift,
    /// `elbow_flex`, servo 3.
    ElbowFlex,
    /// `wrist_flex`, servo 4.
    WristFlex,
    /// `wrist_roll`, servo 5.
    WristRoll,
    /// `gripper`, servo 6.
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
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The joint at an action-key index.
    pub fn from_index(index: usize) -> Option<Joint> {
        Self::ALL.get(index).copied()
    }

    /// The LeRobot label, e.g. `shoulder_pan`, the same on every arm.
    pub const fn label(self) -> &'static str {
        match self {
            Joint::ShoulderPan => "shoulder_pan",
            Joint::ShoulderLift => "shoulder_lift",
            Joint::ElbowFlex => "elbow_flex",
            Joint::WristFlex => "wrist_flex",
            Joint::WristRoll => "wrist_roll",
            Joint::Gripper => "gripper",
        }
    }

    /// The servo id of this joint on every arm's bus (1..=6).
    pub const fn default_servo_id(self) -> u8 {
        // Six joints: index + 1 always fits.
        self as u8 + 1
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
    fn joints_are_in_action_key_order_with_servo_ids_1_to_6() {
        for (i, joint) in Joint::ALL.iter().enumerate() {
            assert_eq!(joint.index(), i);
            assert_eq!(Joint::from_index(i), Some(*joint));
            assert_eq!(usize::from(joint.default_servo_id()), i + 1);
        }
        assert_eq!(Joint::from_index(6), None);
        assert_eq!(GRIPPER_INDEX, 5);
        assert_eq!(Joint::Gripper.to_string(), "gripper");
    }
}
