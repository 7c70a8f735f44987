//! The model files of each arm in the registry (`fakesim_arm::arms`), compiled in: the arm and
//! its scenes, looked up by [`ArmType`].

use fakesim_arm::ArmType;

/// One arm's MJCF files.
#[derive(Debug)]
pub(crate) struct ArmModel {
    /// The MJCF files of the arm and its scenes, and its meshes: path under `assets/`, contents.
    pub(crate) files: &'static [(&'static str, &'static [u8])],
    /// Path under `assets/` of the arm on the table.
    pub(crate) scene: &'static str,
    /// Path under `assets/` of the arm on the table with the task objects.
    pub(crate) tabletop: &'static str,
    /// Path under `assets/` of two of the arm on the table (`left/`, `right/`).
    pub(crate) pair: &'static str,
    /// Path under `assets/` of the pair with the task objects.
    pub(crate) pair_tabletop: &'static str,
}

/// The model files of `arm`.
pub(crate) fn model(arm: ArmType) -> &'static ArmModel {
    match arm {
        ArmType::So101 => &SO101,
        ArmType::So100 => &SO100,
    }
}

/// Each named file under `assets/`, compiled in: (path, contents).
macro_rules! asset_files {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_bytes!(concat!("../../../assets/", $path)))),*]
    };
}

/// The SO-101: joints named by servo id (`assets/so101`), drawn with the published parts
/// (`assets/so101/meshes`).
const SO101: ArmModel = ArmModel {
    files: asset_files![
        "so101/so101.xml",
        "so101/scene.xml",
        "so101/tabletop.xml",
        "so101/pair.xml",
        "so101/pair_tabletop.xml",
        "so101/meshes/base_motor_holder_so101_v1.stl",
        "so101/meshes/base_so101_v2.stl",
        "so101/meshes/motor_holder_so101_base_v1.stl",
        "so101/meshes/motor_holder_so101_wrist_v1.stl",
        "so101/meshes/moving_jaw_so101_v1.stl",
        "so101/meshes/rotation_pitch_so101_v1.stl",
        "so101/meshes/sts3215_03a_no_horn_v1.stl",
        "so101/meshes/sts3215_03a_v1.stl",
        "so101/meshes/under_arm_so101_v1.stl",
        "so101/meshes/upper_arm_so101_v1.stl",
        "so101/meshes/waveshare_mounting_plate_so101_v2.stl",
        "so101/meshes/wrist_roll_follower_so101_camera_mount.stl",
        "so101/meshes/wrist_roll_follower_so101_v1.stl",
        "so101/meshes/wrist_roll_pitch_so101_v2.stl",
    ],
    scene: "so101/scene.xml",
    tabletop: "so101/tabletop.xml",
    pair: "so101/pair.xml",
    pair_tabletop: "so101/pair_tabletop.xml",
};

/// The SO-100: joints named by CAD term (`assets/so100`), drawn with the published parts
/// (`assets/so100/meshes`).
const SO100: ArmModel = ArmModel {
    files: asset_files![
        "so100/so100.xml",
        "so100/scene.xml",
        "so100/tabletop.xml",
        "so100/pair.xml",
        "so100/pair_tabletop.xml",
        "so100/meshes/Base.stl",
        "so100/meshes/Base_Motor.stl",
        "so100/meshes/Fixed_Jaw.stl",
        "so100/meshes/Fixed_Jaw_Motor.stl",
        "so100/meshes/Lower_Arm.stl",
        "so100/meshes/Lower_Arm_Motor.stl",
        "so100/meshes/Moving_Jaw.stl",
        "so100/meshes/Rotation_Pitch.stl",
        "so100/meshes/Rotation_Pitch_Motor.stl",
        "so100/meshes/Upper_Arm.stl",
        "so100/meshes/Upper_Arm_Motor.stl",
        "so100/meshes/Wrist_Pitch_Roll.stl",
        "so100/meshes/Wrist_Pitch_Roll_Motor.stl",
    ],
    scene: "so100/scene.xml",
    tabletop: "so100/tabletop.xml",
    pair: "so100/pair.xml",
    pair_tabletop: "so100/pair_tabletop.xml",
};
