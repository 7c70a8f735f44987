//! Profiles made cameras of the twin's model: added to the scene's spec before it compiles, and
//! the size each camera's frames come at.

use super::{CameraProfile, Distortion, Lens};
use crate::error::TwinError;
use crate::scene::mount_body;
use fakesim_arm::quote::Quoted;
use mujoco_rs::prelude::*;
use mujoco_rs::wrappers::mj_editing::MjSpec;
use std::collections::HashMap;
use std::sync::Arc;

/// Metres per pixel of the sensor a profile with intrinsics in pixels is given: MuJoCo needs
/// a sensor size with them, and only the ratios of focal length and principal point to it
/// count, so any pitch draws the same image.
const PIXEL_PITCH_M: f64 = 1e-6;

/// Adds each profile to `spec` as a camera: in the world, or on its mount's body.
pub(crate) fn add_profiles(spec: &mut MjSpec, profiles: &[CameraProfile]) -> Result<(), TwinError> {
    for profile in profiles {
        let refused =
            |problem: String| TwinError::Scene(format!("camera profile {}: {problem}", Quoted(&profile.name)));
        if spec.camera(&profile.name).is_some() {
            return Err(refused(
                "the scene has a camera of that name already; give the profile another name".to_owned(),
            ));
        }
        let body = mount_body(spec, profile.mount.as_deref()).map_err(refused)?;
        let camera = body.add_camera();
        camera
            .set_name(&profile.name)
            .map_err(|e| refused(format!("MuJoCo refused its name: {e}")))?;
        *camera.pos_mut() = profile.pos;
        *camera.quat_mut() = profile.quat;
        let (width, height) = (profile.width, profile.height);
        *camera.resolution_mut() = [width, height].map(|side| i32::try_from(side).unwrap_or(i32::MAX));
        match profile.lens() {
            Lens::Fovy(fovy) => camera.set_fovy(fovy),
            Lens::Pixels { fx, fy, cx, cy } => {
                let (w, h) = (f64::from(width), f64::from(height));
                *camera.sensor_size_mut() = [w, h].map(|side| (side * PIXEL_PITCH_M) as f32);
                *camera.focal_pixel_mut() = [fx as f32, fy as f32];
                *camera.principal_pixel_mut() = mujoco_principal(w, h, cx, cy).map(|v| v as f32);
            }
        }
    }
    Ok(())
}

/// MuJoCo's principal point (pixels) for OpenCV's `cx`, `cy` in a `w` x `h` image: MuJoCo
/// measures it from the image's centre, positive towards the left and the top (a principal
/// point offset by +p draws the scene p pixels further left or up), and on a pixel grid whose
/// centres are at half pixels.
fn mujoco_principal(w: f64, h: f64, cx: f64, cy: f64) -> [f64; 2] {
    [w / 2.0 - (cx + 0.5), h / 2.0 - (cy + 0.5)]
}

/// The size each of `model`'s cameras draws its frames at, by camera id: a camera with a
/// resolution of its own (a profile's, or a scene camera's `resolution`) at that; the others,
/// `None`, at the size a request asks for.
pub(crate) fn frame_sizes(model: &MjModel) -> Vec<Option<(u32, u32)>> {
    model
        .cam_resolution()
        .iter()
        .map(|&[w, h]| match (u32::try_from(w), u32::try_from(h)) {
            (Ok(w), Ok(h)) if w > 1 || h > 1 => Some((w, h)),
            _ => None,
        })
        .collect()
}

/// Grows the model's offscreen buffer to hold the largest frame of its cameras.
pub(crate) fn fit_offscreen(model: &mut MjModel) {
    let (width, height) = frame_sizes(model)
        .into_iter()
        .flatten()
        .fold((0, 0), |(w, h), (cw, ch)| (w.max(cw), h.max(ch)));
    let global = &mut model.vis_mut().global;
    global.offwidth = global.offwidth.max(i32::try_from(width).unwrap_or(i32::MAX));
    global.offheight = global.offheight.max(i32::try_from(height).unwrap_or(i32::MAX));
}

/// The lens distortion of each profile that has one, by its camera's id in `model`.
pub(crate) fn distortions(model: &MjModel, profiles: &[CameraProfile]) -> Arc<HashMap<usize, Distortion>> {
    let lenses = profiles
        .iter()
        .filter_map(|profile| {
            let id = model.name_to_id(MjtObjBase::mjOBJ_CAMERA, &profile.name)?;
            Some((id, Distortion::of(profile)?))
        })
        .collect();
    Arc::new(lenses)
}
