//! The arms the twin can be: each one's model files, joint names and LeRobot labels, servo ids,
//! LeRobot robot type and calibration directory, and home pose.

use crate::joints::ARM_JOINTS;

/// Which arm a twin holds.
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

    /// What the twin and its drivers know of this arm.
    pub fn spec(self) -> &'static ArmSpec {
        match self {
            ArmType::So101 => &SO101,
            ArmType::So100 => &SO100,
        }
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

/// One arm as the twin and its drivers know it.
#[derive(Debug)]
pub struct ArmSpec {
    /// Which arm this is.
    pub kind: ArmType,
    /// Short name (`so101`, `so100`): the robot of qualified joint names such as
    /// `so100/shoulder_pan`.
    pub name: &'static str,
    /// The MJCF files of the arm and its scenes, compiled in: path under `assets/`, contents.
    pub(crate) files: &'static [(&'static str, &'static [u8])],
    /// Path under `assets/` of the arm on the table.
    pub(crate) scene: &'static str,
    /// Path under `assets/` of the arm on the table with the task objects.
    pub(crate) tabletop: &'static str,
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

/// The SO-101: joints named by servo id (`assets/so101`).
pub const SO101: ArmSpec = ArmSpec {
    kind: ArmType::So101,
    name: "so101",
    files: &[
        ("so101/so101.xml", include_bytes!("../../../assets/so101/so101.xml")),
        ("so101/scene.xml", include_bytes!("../../../assets/so101/scene.xml")),
        (
            "so101/tabletop.xml",
            include_bytes!("../../../assets/so101/tabletop.xml"),
        ),
    ],
    scene: "so101/scene.xml",
    tabletop: "so101/tabletop.xml",
    joints: joints(so101_names()),
    lerobot_robot: "so101_follower",
    calibration_dir: "so_follower",
    home: [0.0, -0.8, 0.4, 1.55, 0.0, 0.6],
};

/// The SO-100: joints named by CAD term (`assets/so100`). Its home puts the TCP where the
/// SO-101's home puts it, the jaws pointing the same way.
pub const SO100: ArmSpec = ArmSpec {
    kind: ArmType::So100,
    name: "so100",
    files: &[
        ("so100/so100.xml", include_bytes!("../../../assets/so100/so100.xml")),
        ("so100/scene.xml", include_bytes!("../../../assets/so100/scene.xml")),
        (
            "so100/tabletop.xml",
            include_bytes!("../../../assets/so100/tabletop.xml"),
        ),
    ],
    scene: "so100/scene.xml",
    tabletop: "so100/tabletop.xml",
    joints: joints(["Rotation", "Pitch", "Elbow", "Wrist_Pitch", "Wrist_Roll", "Jaw"]),
    lerobot_robot: "so100_follower",
    calibration_dir: "so_follower",
    home: [0.0, -2.41, 2.0, 1.56, 0.0, 0.6],
};

/// The SO-101's model names its joints by servo id, as the joint table does.
const fn so101_names() -> [&'static str; 6] {
    let mut names = [""; 6];
    let mut i = 0;
    while i < names.len() {
        names[i] = ARM_JOINTS[i].id;
        i += 1;
    }
    names
}

/// The six joints of an arm whose model names them `names`, with the joint table's labels and
/// servo ids 1..=6.
const fn joints(names: [&'static str; 6]) -> [ArmJoint; 6] {
    let mut joints = [ArmJoint {
        name: "",
        label: "",
        servo_id: 0,
    }; 6];
    let mut i = 0;
    while i < joints.len() {
        joints[i] = ArmJoint {
            name: names[i],
            label: ARM_JOINTS[i].label,
            servo_id: i as u8 + 1,
        };
        i += 1;
    }
    joints
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_arm_has_the_joint_table_s_labels_and_servo_ids_1_to_6() {
        for kind in ArmType::ALL {
            let arm = kind.spec();
            assert_eq!(arm.kind, kind);
            for (i, (joint, table)) in arm.joints.iter().zip(&ARM_JOINTS).enumerate() {
                assert_eq!(joint.label, table.label, "{}", arm.name);
                assert_eq!(usize::from(joint.servo_id), i + 1, "{}", arm.name);
            }
        }
        assert_eq!(SO101.joints.map(|j| j.name), ["1", "2", "3", "4", "5", "6"]);
        assert_eq!(SO100.joints[5].name, "Jaw");
        assert_eq!(SO100.joints[5].label, "gripper");
    }
}
