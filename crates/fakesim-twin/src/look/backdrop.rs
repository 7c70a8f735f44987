//! A camera's backdrop: a photo of the real scene, shown wherever the camera sees no part of
//! an arm and no task object. The mask comes from MuJoCo's renderer: the same view drawn again
//! from a copy of the model that holds only the foreground geoms (those of bodies that move: an
//! arm, a free or mocap object), each in one flat colour, unlit.
//!
//! MuJoCo's segmentation flags (`mjRND_SEGMENT`) live on the renderer's scene, which mujoco-rs 7
//! lends out read-only; the flat-coloured copy gives the same mask from the same rasteriser.
//! A foreground material with a texture would be drawn textured, not flat: the arms and task
//! objects have none.

use crate::error::TwinError;
use image::RgbImage;
use image::imageops::FilterType;
use mujoco_rs::prelude::*;
use std::path::{Path, PathBuf};

/// Largest width or height of a backdrop photo, pixels (a 8K frame); larger are refused
/// before they are decoded.
pub const MAX_BACKDROP_SIDE: u32 = 8192;
/// How far a photo's aspect ratio may be from the frame's (relative) and still be resized to it.
pub const ASPECT_SLACK: f64 = 0.01;
/// The geom group the background is moved to in the mask's model: one the renderer does not
/// draw (MuJoCo's default options draw groups 0, 1 and 2).
const HIDDEN_GROUP: i32 = 5;

/// A photo to show behind one camera's foreground, decoded once at start.
#[derive(Debug, Clone)]
pub struct Backdrop {
    /// The camera it is shown behind, by name.
    pub camera: String,
    /// The file it was read from.
    pub path: PathBuf,
    image: RgbImage,
}

impl Backdrop {
    /// Reads a PNG or JPEG photo (the format from its bytes) for `camera`; a file that cannot
    /// be read or decoded, or is larger than [`MAX_BACKDROP_SIDE`], is refused with the reason.
    pub fn open(camera: &str, path: &Path) -> Result<Backdrop, TwinError> {
        let image = crate::image::read_rgb(path, MAX_BACKDROP_SIDE, "photo")
            .map_err(|why| TwinError::Backdrop(format!("backdrop of camera {camera:?}, {}: {why}", path.display())))?;
        Ok(Backdrop {
            camera: camera.to_owned(),
            path: path.to_owned(),
            image,
        })
    }

    /// The photo's width and height, pixels.
    pub fn size(&self) -> (u32, u32) {
        self.image.dimensions()
    }

    /// The photo as RGB bytes of a `width` x `height` frame: resized when its aspect ratio is
    /// the frame's (within [`ASPECT_SLACK`]), else refused: a photo is never cropped or
    /// stretched, so it shows the real scene where the camera sees it.
    pub(crate) fn fitted(&self, width: u32, height: u32) -> Result<Vec<u8>, TwinError> {
        let (w, h) = self.size();
        let ratio = (f64::from(w) * f64::from(height)) / (f64::from(h) * f64::from(width));
        if (ratio - 1.0).abs() > ASPECT_SLACK {
            return Err(TwinError::Backdrop(format!(
                "backdrop of camera {:?}, {}, is {w}x{h}; a {width}x{height} frame has another shape: \
                 ask frames of the photo's aspect ratio, or give a photo of the frame's",
                self.camera,
                self.path.display()
            )));
        }
        if (w, h) == (width, height) {
            return Ok(self.image.as_raw().clone());
        }
        Ok(image::imageops::resize(&self.image, width, height, FilterType::Triangle).into_raw())
    }
}

/// Whether each geom of `model` is foreground: a geom of a body whose tree under the world
/// moves (it has a joint or a mocap body: an arm, a task object). The world's own geoms and
/// those of fixed trees (the table) are background.
pub fn foreground_geoms(model: &MjModel) -> Vec<bool> {
    let roots = model.body_rootid();
    let mut moving = vec![false; roots.len()];
    for (body, &root) in roots.iter().enumerate() {
        if model.body_jntnum()[body] > 0 || model.body_mocapid()[body] >= 0 {
            moving[root as usize] = true;
        }
    }
    model
        .geom_bodyid()
        .iter()
        .map(|&body| body > 0 && moving[roots[body as usize] as usize])
        .collect()
}

/// The flat colour the mask's model draws the foreground in (no sky or room pixel is drawn
/// in it: they are greys and browns).
const MASK_RGB: [u8; 3] = [255, 0, 255];

/// A copy of `model` in which only the foreground geoms are drawn, in [`MASK_RGB`], lit by an
/// ambient white light alone (the mask's model).
pub(crate) fn mask_model(model: &MjModel) -> MjModel {
    let mut mask = model.clone();
    let foreground = foreground_geoms(model);
    for (group, foreground) in mask.geom_group_mut().iter_mut().zip(foreground) {
        if !foreground {
            *group = HIDDEN_GROUP;
        }
    }
    let flat = MASK_RGB.map(|c| f32::from(c) / 255.0);
    let flat = [flat[0], flat[1], flat[2], 1.0];
    mask.geom_rgba_mut().fill(flat);
    mask.mat_rgba_mut().fill(flat);
    mask.mat_emission_mut().fill(0.0);
    mask.mat_specular_mut().fill(0.0);
    mask.mat_reflectance_mut().fill(0.0);
    mask.light_active_mut().fill(false);
    mask.light_castshadow_mut().fill(false);
    let headlight = &mut mask.vis_mut().headlight;
    headlight.active = 1;
    headlight.ambient = [1.0; 3];
    headlight.diffuse = [0.0; 3];
    headlight.specular = [0.0; 3];
    mask
}

/// The foreground pixels of an RGB frame of the mask's model: those in [`MASK_RGB`].
pub(crate) fn mask_of_rgb(rgb: &[u8]) -> Vec<bool> {
    rgb.chunks_exact(3).map(|pixel| pixel == MASK_RGB).collect()
}

/// `rgb` with every pixel outside `mask` taken from `backdrop`, brightened by `brightness`.
pub(crate) fn composite(rgb: &mut [u8], mask: &[bool], backdrop: &[u8], brightness: f64) {
    for ((pixel, &foreground), photo) in rgb.chunks_exact_mut(3).zip(mask).zip(backdrop.chunks_exact(3)) {
        if !foreground {
            for (out, &value) in pixel.iter_mut().zip(photo) {
                *out = if brightness == 1.0 {
                    value
                } else {
                    (f64::from(value) * brightness).round().clamp(0.0, 255.0) as u8
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::scene::Scene;

    #[test]
    fn the_arms_and_objects_are_foreground_and_the_room_is_not() {
        for scene in [
            Scene::Tabletop,
            Scene::Pair {
                arm: crate::ArmType::So101,
                objects: true,
            },
        ] {
            let model = scene.compile().unwrap();
            let foreground = foreground_geoms(&model);
            let named = |name: &str| foreground[model.name_to_id(MjtObjBase::mjOBJ_GEOM, name).unwrap()];
            for background in ["floor", "table_top", "table_leg_fl"] {
                assert!(!named(background), "{background}");
            }
            for object in ["cube_red", "bowl_floor", "target"] {
                assert!(named(object), "{object}");
            }
            // Every geom of an arm's bodies (the base included) is foreground.
            let arm_geoms = (0..foreground.len()).filter(|&g| {
                let body = model.geom_bodyid()[g] as usize;
                let name = model.id_to_name(MjtObjBase::mjOBJ_BODY, body).unwrap_or_default();
                name.contains("base") || name.contains("gripper")
            });
            assert!(arm_geoms.clone().count() > 0);
            assert!(arm_geoms.into_iter().all(|g| foreground[g]));
        }
    }

    #[test]
    fn a_photo_of_another_shape_is_refused_and_one_of_the_same_is_resized() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("photo.png");
        RgbImage::from_fn(40, 30, |x, _| image::Rgb([x as u8, 0, 0]))
            .save(&path)
            .unwrap();
        let backdrop = Backdrop::open("front", &path).unwrap();
        assert_eq!(backdrop.fitted(40, 30).unwrap().len(), 40 * 30 * 3);
        assert_eq!(backdrop.fitted(8, 6).unwrap().len(), 8 * 6 * 3);
        let err = backdrop.fitted(32, 32).unwrap_err().to_string();
        assert!(err.contains("40x30") && err.contains("32x32"), "{err}");
        std::fs::write(&path, b"not a photo").unwrap();
        let err = Backdrop::open("front", &path).unwrap_err().to_string();
        assert!(err.contains("photo.png"), "{err}");
        assert!(Backdrop::open("front", &dir.path().join("missing.jpg")).is_err());
    }

    #[test]
    fn the_composite_keeps_the_mask_and_brightens_the_rest() {
        let mut rgb = vec![10, 20, 30, 40, 50, 60];
        composite(&mut rgb, &[true, false], &[100, 200, 250, 100, 200, 250], 1.1);
        assert_eq!(rgb, vec![10, 20, 30, 110, 220, 255]);
    }
}
