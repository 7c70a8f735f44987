//! How the cameras see the scene beyond its geometry: a photo behind the arm and the objects
//! (a camera's [`backdrop`]), and an episode's [`Look`], the lights, colours, camera poses and
//! backdrop brightness its seed drew within the configured [`variations`].

pub mod backdrop;
pub mod variations;

use crate::colors::Rgb;
use mujoco_rs::prelude::*;
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde::{Serialize, Serializer};

/// What one episode's seed drew: the changes its frames are drawn with. The default changes
/// nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Look {
    /// The seed the values were drawn from.
    pub seed: u64,
    /// Each light of the model that varied, in model order.
    pub lights: Vec<LightLook>,
    /// Each part or object material that varied.
    pub colors: Vec<ColorLook>,
    /// Each camera of the model whose pose varied, in model order.
    pub cameras: Vec<CameraLook>,
    /// Factor every backdrop pixel is multiplied by (1: the photo as it is).
    pub backdrop_brightness: f64,
}

impl Default for Look {
    fn default() -> Self {
        Look {
            seed: 0,
            lights: Vec::new(),
            colors: Vec::new(),
            cameras: Vec::new(),
            backdrop_brightness: 1.0,
        }
    }
}

/// A light's drawn direction and intensity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LightLook {
    /// The light's name in the model (`light<i>` when it has none).
    pub light: String,
    /// Its direction, unit length, in its body's frame.
    pub dir: [f64; 3],
    /// Angle between that direction and the model's, degrees.
    pub tilt_deg: f64,
    /// Factor its diffuse colour is multiplied by.
    pub intensity: f64,
}

/// A material's drawn colour.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColorLook {
    /// The material's name in the model.
    pub material: String,
    /// The colour drawn, `#rrggbb`.
    #[serde(serialize_with = "hex")]
    pub color: Rgb,
    /// The step from the model's colour on each channel, red, green, blue.
    pub shift: [i16; 3],
}

/// A camera's drawn pose change, in its body's frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CameraLook {
    /// The camera's name in the model.
    pub camera: String,
    /// Shift of its position, millimetres along x, y, z.
    pub shift_mm: [f64; 3],
    /// Turn of its orientation, a rotation vector in degrees about its own x, y, z.
    pub turn_deg: [f64; 3],
}

/// An [`Rgb`] written as `#rrggbb`.
fn hex<S: Serializer>(color: &Rgb, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(color)
}

impl Look {
    /// Applies the drawn lights, colours and camera poses to `model` (the model the cameras
    /// draw); a name the model does not hold is passed over.
    pub(crate) fn apply(&self, model: &mut MjModel) {
        for light in &self.lights {
            if let Some(id) = light_id(model, &light.light) {
                model.light_dir_mut()[id] = light.dir;
                let diffuse = &mut model.light_diffuse_mut()[id];
                *diffuse = diffuse.map(|c| (f64::from(c) * light.intensity) as f32);
            }
        }
        for color in &self.colors {
            if let Some(id) = model.name_to_id(MjtObjBase::mjOBJ_MATERIAL, &color.material) {
                let [r, g, b] = color.color.0.map(|c| f32::from(c) / 255.0);
                let alpha = model.mat_rgba()[id][3];
                model.mat_rgba_mut()[id] = [r, g, b, alpha];
            }
        }
        for camera in &self.cameras {
            if let Some(id) = model.name_to_id(MjtObjBase::mjOBJ_CAMERA, &camera.camera) {
                let pos = &mut model.cam_pos_mut()[id];
                for (p, mm) in pos.iter_mut().zip(camera.shift_mm) {
                    *p += mm / 1000.0;
                }
                let [w, x, y, z] = model.cam_quat()[id];
                let turn = Vector3::from(camera.turn_deg.map(f64::to_radians));
                let turned = UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z))
                    * UnitQuaternion::from_scaled_axis(turn);
                model.cam_quat_mut()[id] = [turned.w, turned.i, turned.j, turned.k];
            }
        }
    }
}

/// The name a light is known by: its own, else `light<i>`.
pub(crate) fn light_name(model: &MjModel, id: usize) -> String {
    model
        .id_to_name(MjtObjBase::mjOBJ_LIGHT, id)
        .filter(|name| !name.is_empty())
        .map_or_else(|| format!("light{id}"), str::to_owned)
}

/// The light known by `name` (see [`light_name`]).
fn light_id(model: &MjModel, name: &str) -> Option<usize> {
    (0..model.light_dir().len()).find(|&id| light_name(model, id) == name)
}
