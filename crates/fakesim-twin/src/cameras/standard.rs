//! The profiles every built-in scene has unless the user gives others of the same names: `front`,
//! a front USB webcam, and `wrist`, the arm's wrist camera (each arm's in a pair).

use super::CameraProfile;
use crate::scene::Scene;
use fakesim_arm::ArmType;

/// Name of the standard front camera.
pub const FRONT: &str = "front";
/// Name of the standard wrist camera (`left/wrist`, `right/wrist` in a pair).
pub const WRIST: &str = "wrist";

/// The standard profiles of `scene`: `front`, and `wrist` on each arm's gripper; none for a
/// user's scene file (whose bodies and room are its own).
pub fn standard_profiles(scene: &Scene) -> Vec<CameraProfile> {
    let Some(arm) = scene.arms().first().map(|spec| spec.kind) else {
        return Vec::new();
    };
    if matches!(scene, Scene::File(_)) {
        return Vec::new();
    }
    let mut profiles = vec![front()];
    profiles.extend(scene.arms().into_iter().map(|spec| {
        let mut profile = wrist(arm);
        profile.name = spec.part_name(WRIST);
        profile.mount = profile.mount.map(|mount| spec.part_name(&mount));
        profile
    }));
    profiles
}

/// A 640x480 webcam on a small stand at the table's front edge, 0.65 m in front of the arm's
/// base and 0.30 m above the table, looking back at the arm and its workspace (aimed at
/// x = 0.10 m, 0.08 m above the table). Its lens is close to a common 1080p webcam's at 640x480:
/// fx = fy = 500 px, centred, a 77° diagonal field of view (Logitech's C920 states 78°).
fn front() -> CameraProfile {
    CameraProfile {
        name: FRONT.to_owned(),
        width: 640,
        height: 480,
        fovy_deg: None,
        fx: Some(500.0),
        fy: Some(500.0),
        cx: Some(319.5),
        cy: Some(239.5),
        pos: [0.65, 0.0, 1.10],
        quat: [0.585532, 0.396424, 0.396424, 0.585532],
        mount: None,
        distortion: None,
    }
}

/// The wrist camera of `arm` at 640x480.
///
/// SO-101: the published wrist camera (MuJoCo Menagerie's `robotstudio_so101/so101.xml`,
/// camera `wrist_cam` of body `camera_mount` in `gripper`, on TheRobotStudio's camera mount):
/// at (0, 0.055, -0.045) in the gripper's frame, turned -0.57 rad about its x axis, 3.6 mm focal
/// length on a 5.76 x 3.24 mm sensor (1200 px at 1920x1080). At 640x480 the horizontal field of
/// view is kept: fx = fy = 400 px, centred.
///
/// SO-100: the published model has no wrist camera; ours sits where the twin's
/// `robot0_eye_in_hand` does, on our mount under the fixed jaw, with the same lens.
fn wrist(arm: ArmType) -> CameraProfile {
    let (mount, pos, quat) = match arm {
        ArmType::So101 => ("gripper", [0.0, 0.055, -0.045], [0.959662, -0.281157, 0.0, 0.0]),
        ArmType::So100 => (
            "Fixed_Jaw",
            [0.0, -0.035, 0.026],
            [0.606117, -0.364173, 0.364173, 0.606117],
        ),
    };
    CameraProfile {
        name: WRIST.to_owned(),
        width: 640,
        height: 480,
        fovy_deg: None,
        fx: Some(400.0),
        fy: Some(400.0),
        cx: Some(319.5),
        cy: Some(239.5),
        pos,
        quat,
        mount: Some(mount.to_owned()),
        distortion: None,
    }
}
