//! The arm registry: which arms there are, what each one's model names its joints, their
//! LeRobot labels and servo ids, the LeRobot robot type and calibration directory, and the home
//! pose; and how a caller's joint name resolves on an arm. The model files live in the twin.

use std::fmt;
use std::str::FromStr;

use crate::joints::Joint;

/// Which arm a daemon, a twin or an emulator is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ArmType {
    /// TheRobotStudio's SO-101, the default.
    #[default]
    So101,
    /// TheRobotStudio's SO-100: the same STS3215 servos, other links and ranges.
    So100,
}

impl ArmType {
    /// Every arm, the default first.
    pub const ALL: [ArmType; 2] = [ArmType::So101, ArmType::So100];

    /// The registry's entry for this arm.
    pub fn spec(self) -> &'static ArmSpec {
        match self {
            ArmType::So101 => &SO101,
            ArmType::So100 => &SO100,
        }
    }

    /// The arm's short name, `so101` or `so100`.
    pub fn name(self) -> &'static str {
        self.spec().name
    }
}

impl fmt::Display for ArmType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An arm name the registry does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown arm {name:?}; known: so101, so100")]
pub struct UnknownArm {
    /// The name given.
    pub name: String,
}

impl FromStr for ArmType {
    type Err = UnknownArm;

    /// An arm by its short name, any case.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        ArmType::ALL
            .into_iter()
            .find(|arm| arm.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| UnknownArm { name: name.to_owned() })
    }
}

/// One arm joint: its name in the model, its LeRobot label and its servo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArmJoint {
    /// The MuJoCo joint and actuator name.
    pub name: &'static str,
    /// The LeRobot motor name (`shoulder_pan` .. `gripper`), the same on every arm.
    pub label: &'static str,
    /// Servo id on the arm's bus.
    pub servo_id: u8,
}

/// One arm of a bimanual pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    /// The arm on the left, seen from behind the arms (+y).
    Left,
    /// The arm on the right (-y).
    Right,
}

impl Side {
    /// Both sides, left first: the order of a bimanual action.
    pub const BOTH: [Side; 2] = [Side::Left, Side::Right];

    /// `left` or `right`: the robot of the side's joint names (`left/shoulder_pan`) and the
    /// prefix of its LeRobot features (`left_shoulder_pan.pos`).
    pub const fn name(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
    }

    /// Position in a bimanual action and in the twin's arm list (left 0, right 1).
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A side name that is neither `left` nor `right`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown arm side {}; known: left, right", crate::quote::Quoted(.name))]
pub struct UnknownSide {
    /// The name given.
    pub name: String,
}

impl FromStr for Side {
    type Err = UnknownSide;

    /// A side by name, any case.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Side::BOTH
            .into_iter()
            .find(|side| side.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| UnknownSide { name: name.to_owned() })
    }
}

/// One arm as the registry knows it, alone or as one side of a bimanual pair.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArmSpec {
    /// Which arm this is.
    pub kind: ArmType,
    /// The robot of qualified joint names: the arm's short name (`so101`, `so100`:
    /// `so100/shoulder_pan`) for an arm alone, the side (`left/shoulder_pan`) in a pair.
    pub name: &'static str,
    /// The side of a bimanual pair this arm is, if it is one.
    pub side: Option<Side>,
    /// What the model puts before each of this arm's names (`left/`), empty for an arm alone.
    pub prefix: &'static str,
    /// The six joints in LeRobot's action order (servo id order).
    pub joints: [ArmJoint; 6],
    /// LeRobot's robot type of the follower arm (`--robot.type`).
    pub lerobot_robot: &'static str,
    /// The directory under LeRobot's `robots/` calibration directory its follower's files live
    /// in (LeRobot 0.6 keeps both arms' in `so_follower`, as `feetech::calibration` knows).
    pub calibration_dir: &'static str,
    /// The pose episodes start from (rad, action order), gripper open.
    pub home: [f64; 6],
}

/// The SO-101: its model names joints by servo id (`assets/so101`).
pub const SO101: ArmSpec = ArmSpec {
    kind: ArmType::So101,
    name: "so101",
    joints: joints(["1", "2", "3", "4", "5", "6"]),
    lerobot_robot: "so101_follower",
    calibration_dir: "so_follower",
    home: [0.0, -0.8, 0.4, 1.55, 0.0, 0.6],
    side: None,
    prefix: "",
};

/// The SO-100: its model names joints by CAD term (`assets/so100`). Its home puts the TCP where
/// the SO-101's home puts it, the jaws pointing the same way.
pub const SO100: ArmSpec = ArmSpec {
    kind: ArmType::So100,
    name: "so100",
    joints: joints(["Rotation", "Pitch", "Elbow", "Wrist_Pitch", "Wrist_Roll", "Jaw"]),
    lerobot_robot: "so100_follower",
    calibration_dir: "so_follower",
    home: [0.0, -2.41, 2.0, 1.56, 0.0, 0.6],
    side: None,
    prefix: "",
};

/// The SO-101 on the left of a pair (`left/1` .. `left/6` in the model).
pub const SO101_LEFT: ArmSpec = SO101.on(Side::Left);
/// The SO-101 on the right of a pair.
pub const SO101_RIGHT: ArmSpec = SO101.on(Side::Right);
/// The SO-100 on the left of a pair (`left/Rotation` .. in the model).
pub const SO100_LEFT: ArmSpec = SO100.on(Side::Left);
/// The SO-100 on the right of a pair.
pub const SO100_RIGHT: ArmSpec = SO100.on(Side::Right);

impl ArmType {
    /// The registry's entry for this arm as one side of a bimanual pair.
    pub fn on(self, side: Side) -> &'static ArmSpec {
        match (self, side) {
            (ArmType::So101, Side::Left) => &SO101_LEFT,
            (ArmType::So101, Side::Right) => &SO101_RIGHT,
            (ArmType::So100, Side::Left) => &SO100_LEFT,
            (ArmType::So100, Side::Right) => &SO100_RIGHT,
        }
    }
}

impl ArmSpec {
    /// This arm as `side` of a pair: its names qualified by the side.
    const fn on(self, side: Side) -> ArmSpec {
        let prefix = match side {
            Side::Left => "left/",
            Side::Right => "right/",
        };
        ArmSpec {
            name: side.name(),
            side: Some(side),
            prefix,
            ..self
        }
    }

    /// The model's full name of a joint and its actuator: `left/1` on a pair's left SO-101.
    pub fn model_name(&self, joint: Joint) -> String {
        format!("{}{}", self.prefix, self.joint_name(joint))
    }

    /// The model's full name of one of this arm's bodies or sites (`tcp`, `left/tcp`).
    pub fn part_name(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// The registry's row for a joint.
    pub fn joint(&self, joint: Joint) -> &ArmJoint {
        &self.joints[joint.index()]
    }

    /// The model's name of a joint (also its actuator's): `"1"` or `Rotation` for the pan.
    pub fn joint_name(&self, joint: Joint) -> &'static str {
        self.joint(joint).name
    }

    /// A joint as answers and refusals print it: model name and label, `Rotation (shoulder_pan)`
    /// (`left/1 (left/shoulder_pan)` on one side of a pair).
    pub fn joint_display(&self, joint: Joint) -> String {
        let row = self.joint(joint);
        let p = self.prefix;
        format!("{p}{} ({p}{})", row.name, row.label)
    }

    /// A joint's LeRobot label as this arm's answers print it: `shoulder_pan`, or
    /// `left/shoulder_pan` on one side of a pair.
    pub fn label(&self, joint: Joint) -> String {
        format!("{}{}", self.prefix, joint.label())
    }

    /// Finds the joint a caller means: model name or label, any case, bare or qualified by
    /// this arm's name (`so100/shoulder_pan`); another robot's qualified name is no joint.
    pub fn resolve_joint(&self, key: &str) -> Option<Joint> {
        let bare = match key.split_once('/') {
            Some((robot, rest)) if robot.eq_ignore_ascii_case(self.name) => rest,
            Some(_) => return None,
            None => key,
        };
        let bare = bare.trim();
        Joint::ALL.into_iter().find(|&joint| {
            let row = self.joint(joint);
            row.name.eq_ignore_ascii_case(bare) || row.label.eq_ignore_ascii_case(bare)
        })
    }

    /// The names a caller may use, for answers and refusals: `Rotation (shoulder_pan)`, ...
    pub fn known_joint_names(&self) -> Vec<String> {
        Joint::ALL.map(|joint| self.joint_display(joint)).to_vec()
    }

    /// A model name with this arm's `robot/` prefix taken off, if it has one; on a side of a
    /// pair, whose model names keep the side, the name as given.
    pub fn strip_robot<'a>(&self, name: &'a str) -> &'a str {
        if !self.prefix.is_empty() {
            return name;
        }
        match name.split_once('/') {
            Some((robot, rest)) if robot.eq_ignore_ascii_case(self.name) => rest,
            _ => name,
        }
    }
}

/// The six joints of an arm whose model names them `names`, with the joints' labels and
/// servo ids.
const fn joints(names: [&'static str; 6]) -> [ArmJoint; 6] {
    let mut joints = [ArmJoint {
        name: "",
        label: "",
        servo_id: 0,
    }; 6];
    let mut i = 0;
    while i < joints.len() {
        let joint = Joint::ALL[i];
        joints[i] = ArmJoint {
            name: names[i],
            label: joint.label(),
            servo_id: joint.default_servo_id(),
        };
        i += 1;
    }
    joints
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_arm_has_the_joints_labels_and_servo_ids_1_to_6() {
        for kind in ArmType::ALL {
            let arm = kind.spec();
            assert_eq!(arm.kind, kind);
            assert_eq!(kind.to_string().parse::<ArmType>(), Ok(kind));
            for (i, joint) in Joint::ALL.into_iter().enumerate() {
                assert_eq!(arm.joint(joint).label, joint.label(), "{}", arm.name);
                assert_eq!(usize::from(arm.joint(joint).servo_id), i + 1, "{}", arm.name);
            }
        }
        assert_eq!(SO101.joints.map(|j| j.name), ["1", "2", "3", "4", "5", "6"]);
        assert_eq!(SO100.joint_name(Joint::Gripper), "Jaw");
        assert_eq!(SO100.joint_display(Joint::ShoulderPan), "Rotation (shoulder_pan)");
        assert_eq!("SO100".parse::<ArmType>(), Ok(ArmType::So100));
        assert!("so102".parse::<ArmType>().is_err());
    }

    #[test]
    fn so101_resolves_ids_labels_any_case_and_qualified() {
        assert_eq!(SO101.resolve_joint("1"), Some(Joint::ShoulderPan));
        assert_eq!(SO101.resolve_joint("6"), Some(Joint::Gripper));
        assert_eq!(SO101.resolve_joint("Elbow_Flex"), Some(Joint::ElbowFlex));
        assert_eq!(SO101.resolve_joint("SO101/wrist_roll"), Some(Joint::WristRoll));
        assert_eq!(SO101.resolve_joint("so101/4"), Some(Joint::WristFlex));
    }

    #[test]
    fn so100_resolves_cad_names_and_labels_any_case_and_qualified() {
        for key in [
            "Rotation",
            "rotation",
            "shoulder_pan",
            "so100/Rotation",
            "SO100/shoulder_pan",
        ] {
            assert_eq!(SO100.resolve_joint(key), Some(Joint::ShoulderPan), "{key}");
        }
        assert_eq!(SO100.resolve_joint("jaw"), Some(Joint::Gripper));
        assert_eq!(SO100.resolve_joint("Wrist_Pitch"), Some(Joint::WristFlex));
    }

    #[test]
    fn a_side_of_a_pair_resolves_its_own_qualified_names_and_prints_them() {
        let left = ArmType::So101.on(Side::Left);
        assert_eq!(left.resolve_joint("left/shoulder_pan"), Some(Joint::ShoulderPan));
        assert_eq!(left.resolve_joint("LEFT/6"), Some(Joint::Gripper));
        assert_eq!(left.resolve_joint("right/shoulder_pan"), None);
        assert_eq!(left.resolve_joint("so101/shoulder_pan"), None);
        assert_eq!(left.model_name(Joint::ElbowFlex), "left/3");
        assert_eq!(left.joint_display(Joint::ElbowFlex), "left/3 (left/elbow_flex)");
        assert_eq!(left.strip_robot("left/gripper"), "left/gripper");
        let right = ArmType::So100.on(Side::Right);
        assert_eq!(right.resolve_joint("right/Rotation"), Some(Joint::ShoulderPan));
        assert_eq!(right.model_name(Joint::Gripper), "right/Jaw");
        assert_eq!(right.kind, ArmType::So100);
        assert_eq!(right.side, Some(Side::Right));
        assert_eq!("Right".parse::<Side>(), Ok(Side::Right));
        let long = "x".repeat(1 << 16).parse::<Side>().unwrap_err().to_string();
        assert!(
            long.len() < 200,
            "a client's side name is quoted bounded: {} bytes",
            long.len()
        );
    }

    #[test]
    fn each_arm_refuses_unknown_names_and_the_other_arm_s() {
        for key in ["7", "elbow", "panda/elbow_flex", ""] {
            assert_eq!(SO101.resolve_joint(key), None, "{key}");
        }
        assert_eq!(SO101.resolve_joint("so100/shoulder_pan"), None);
        assert_eq!(SO101.resolve_joint("Rotation"), None);
        assert_eq!(SO100.resolve_joint("so101/shoulder_pan"), None);
        assert_eq!(SO100.resolve_joint("1"), None);
    }
}
