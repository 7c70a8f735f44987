//! The six SO-101 joints as a closed set, so per-joint arrays never need a fallible index.

use fakesim_twin::joints::{ARM_JOINTS, JointSpec};
use serde::{Serialize, Serializer};

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
