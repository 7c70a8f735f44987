//! Seeded variations for evaluation: the ranges an episode's look is drawn within, and the
//! draw itself, the same values from the same seed on every machine (ChaCha8).

use super::{CameraLook, ColorLook, LightLook, Look, light_name};
use crate::colors::{PRINTED_MATERIAL, Rgb, SERVO_MATERIAL};
use mujoco_rs::prelude::*;
use nalgebra::{UnitQuaternion, Vector3};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Deserialize;
use thiserror::Error;

/// Largest camera shift a variation may draw (mm): a camera nudged, not moved elsewhere.
pub const MAX_CAMERA_SHIFT_MM: f64 = 50.0;
/// Largest camera turn a variation may draw about each axis (degrees).
pub const MAX_CAMERA_TURN_DEG: f64 = 10.0;
/// Largest tilt of a light's direction (degrees).
pub const MAX_LIGHT_TILT_DEG: f64 = 90.0;

/// The ranges of an episode's variations (the config's `[variations]` table); an aspect left
/// unset does not vary, so the default varies nothing.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub struct Variations {
    /// Each light's direction tilted by up to this many degrees, toward a random side.
    pub light_tilt_deg: Option<f64>,
    /// Each light's diffuse intensity multiplied by a factor from this range, `[low, high]`.
    pub light_intensity: Option<[f64; 2]>,
    /// Each channel of the arm's part colours moved by up to this many steps of 255.
    pub part_color: Option<u8>,
    /// Each channel of the task objects' colours moved by up to this many steps of 255.
    pub object_color: Option<u8>,
    /// Each camera moved by up to this many millimetres along each of its body's axes.
    pub camera_shift_mm: Option<f64>,
    /// Each camera turned by up to this many degrees about each of its own axes.
    pub camera_turn_deg: Option<f64>,
    /// Every backdrop's brightness multiplied by a factor from this range, `[low, high]`.
    pub backdrop_brightness: Option<[f64; 2]>,
}

/// A range no look can be drawn from.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("variations: {0}")]
pub struct BadVariations(String);

impl Variations {
    /// Whether nothing varies.
    pub fn is_off(&self) -> bool {
        *self == Variations::default()
    }

    /// Refuses ranges that are not finite, upside down, negative, or larger than a nudge.
    pub fn check(&self) -> Result<(), BadVariations> {
        let bound = |name: &str, value: Option<f64>, max: f64| match value {
            Some(v) if !(0.0..=max).contains(&v) => {
                Err(BadVariations(format!("{name} must be from 0 to {max}, got {v}")))
            }
            _ => Ok(()),
        };
        bound("light-tilt-deg", self.light_tilt_deg, MAX_LIGHT_TILT_DEG)?;
        bound("camera-shift-mm", self.camera_shift_mm, MAX_CAMERA_SHIFT_MM)?;
        bound("camera-turn-deg", self.camera_turn_deg, MAX_CAMERA_TURN_DEG)?;
        for (name, range) in [
            ("light-intensity", self.light_intensity),
            ("backdrop-brightness", self.backdrop_brightness),
        ] {
            if let Some([lo, hi]) = range
                && !(lo.is_finite() && hi.is_finite() && 0.0 <= lo && lo <= hi)
            {
                return Err(BadVariations(format!(
                    "{name} must be [low, high] with 0 <= low <= high, got [{lo}, {hi}]"
                )));
            }
        }
        Ok(())
    }

    /// The look `seed` draws for `model` (the model the cameras draw, part colours painted):
    /// lights in model order, then part and object materials, then cameras, then the backdrop
    /// brightness, each from the same generator, so one seed always draws the same values.
    pub fn draw(&self, seed: u64, model: &MjModel) -> Look {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut look = Look {
            seed,
            ..Look::default()
        };
        if self.light_tilt_deg.is_some() || self.light_intensity.is_some() {
            look.lights = (0..model.light_dir().len())
                .map(|id| self.draw_light(&mut rng, model, id))
                .collect();
        }
        for (material, kind) in varied_materials(model) {
            let jitter = match kind {
                Material::Part => self.part_color,
                Material::Object => self.object_color,
            };
            if let Some(step) = jitter {
                look.colors.push(draw_color(&mut rng, model, material, step));
            }
        }
        if self.camera_shift_mm.is_some() || self.camera_turn_deg.is_some() {
            let shift = self.camera_shift_mm.unwrap_or(0.0);
            let turn = self.camera_turn_deg.unwrap_or(0.0);
            look.cameras = (0..model.cam_pos().len())
                .filter_map(|id| model.id_to_name(MjtObjBase::mjOBJ_CAMERA, id))
                .map(|camera| CameraLook {
                    camera: camera.to_owned(),
                    shift_mm: std::array::from_fn(|_| symmetric(&mut rng, shift)),
                    turn_deg: std::array::from_fn(|_| symmetric(&mut rng, turn)),
                })
                .collect();
        }
        if let Some([lo, hi]) = self.backdrop_brightness {
            look.backdrop_brightness = between(&mut rng, lo, hi);
        }
        look
    }

    /// One light's direction and intensity.
    fn draw_light(&self, rng: &mut ChaCha8Rng, model: &MjModel, id: usize) -> LightLook {
        let base = Vector3::from(model.light_dir()[id]).normalize();
        let tilt_deg = between(rng, 0.0, self.light_tilt_deg.unwrap_or(0.0));
        let side = between(rng, 0.0, std::f64::consts::TAU);
        // Any axis across the direction, turned about it by `side`, tilts it by `tilt_deg`.
        let across = base.cross(&Vector3::x()).try_normalize(1e-9).unwrap_or_else(Vector3::y);
        let axis = UnitQuaternion::from_scaled_axis(base * side) * across;
        let dir = UnitQuaternion::from_scaled_axis(axis * tilt_deg.to_radians()) * base;
        let intensity = self.light_intensity.map_or(1.0, |[lo, hi]| between(rng, lo, hi));
        LightLook {
            light: light_name(model, id),
            dir: [dir.x, dir.y, dir.z],
            tilt_deg,
            intensity,
        }
    }
}

/// Which setting a varied material's colour follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Material {
    /// The arm's printed parts and servo cases.
    Part,
    /// A task object: a material a free-floating or mocap body's geoms are drawn with.
    Object,
}

/// The part and object materials of `model`, in material order.
fn varied_materials(model: &MjModel) -> Vec<(usize, Material)> {
    let mut object = vec![false; model.mat_rgba().len()];
    for (geom, &body) in model.geom_bodyid().iter().enumerate() {
        let body = body as usize;
        let joint = usize::try_from(model.body_jntadr()[body]).ok();
        let free = joint.is_some_and(|j| model.jnt_type()[j] == MjtJoint::mjJNT_FREE);
        if let Ok(material) = usize::try_from(model.geom_matid()[geom])
            && (free || model.body_mocapid()[body] >= 0)
        {
            object[material] = true;
        }
    }
    (0..object.len())
        .filter_map(|id| {
            let name = model.id_to_name(MjtObjBase::mjOBJ_MATERIAL, id).unwrap_or_default();
            let bare = name.rsplit('/').next().unwrap_or(name);
            if bare == PRINTED_MATERIAL || bare == SERVO_MATERIAL {
                Some((id, Material::Part))
            } else {
                object[id].then_some((id, Material::Object))
            }
        })
        .collect()
}

/// A material's colour moved by up to `step` on each channel.
fn draw_color(rng: &mut ChaCha8Rng, model: &MjModel, material: usize, step: u8) -> ColorLook {
    let base = model.mat_rgba()[material];
    let step = i16::from(step);
    let mut shift = [0i16; 3];
    let mut color = [0u8; 3];
    for channel in 0..3 {
        let from = (f64::from(base[channel]) * 255.0).round() as i16;
        let to = (from + rng.random_range(-step..=step)).clamp(0, 255);
        shift[channel] = to - from;
        color[channel] = to as u8;
    }
    ColorLook {
        material: model
            .id_to_name(MjtObjBase::mjOBJ_MATERIAL, material)
            .unwrap_or_default()
            .to_owned(),
        color: Rgb(color),
        shift,
    }
}

/// A value from `[lo, hi]` (`lo` when the range is empty).
fn between(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    if hi > lo { rng.random_range(lo..=hi) } else { lo }
}

/// A value from `[-reach, reach]`.
fn symmetric(rng: &mut ChaCha8Rng, reach: f64) -> f64 {
    between(rng, -reach, reach)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::scene::Scene;

    fn every_range() -> Variations {
        Variations {
            light_tilt_deg: Some(20.0),
            light_intensity: Some([0.5, 1.5]),
            part_color: Some(30),
            object_color: Some(40),
            camera_shift_mm: Some(5.0),
            camera_turn_deg: Some(2.0),
            backdrop_brightness: Some([0.8, 1.2]),
        }
    }

    #[test]
    fn nothing_varies_by_default_and_bad_ranges_are_refused() {
        let model = Scene::Tabletop.compile().unwrap();
        assert!(Variations::default().is_off());
        assert_eq!(
            Variations::default().draw(7, &model),
            Look {
                seed: 7,
                ..Look::default()
            }
        );
        assert_eq!(every_range().check(), Ok(()));
        for bad in [
            Variations {
                camera_shift_mm: Some(51.0),
                ..Variations::default()
            },
            Variations {
                light_tilt_deg: Some(f64::NAN),
                ..Variations::default()
            },
            Variations {
                light_intensity: Some([1.2, 0.8]),
                ..Variations::default()
            },
            Variations {
                backdrop_brightness: Some([-0.1, 1.0]),
                ..Variations::default()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_draw_covers_lights_parts_objects_and_cameras_within_range() {
        let model = Scene::Tabletop.compile().unwrap();
        let look = every_range().draw(3, &model);
        assert_eq!(look, every_range().draw(3, &model), "the same seed draws the same look");
        assert_ne!(look, every_range().draw(4, &model));
        let materials: Vec<&str> = look.colors.iter().map(|c| c.material.as_str()).collect();
        for name in ["printed", "servo", "cube_red", "cube_blue", "bowl", "target"] {
            assert!(materials.contains(&name), "{name} not in {materials:?}");
        }
        assert!(!materials.contains(&"table_top"), "the room does not vary");
        assert_eq!(look.lights.len(), 2);
        for light in &look.lights {
            let base = Vector3::from(model.light_dir()[light_id(&model, &light.light)]).normalize();
            let angle = base.angle(&Vector3::from(light.dir)).to_degrees();
            assert!(
                (angle - light.tilt_deg).abs() < 1e-6 && light.tilt_deg <= 20.0,
                "{light:?}"
            );
        }
        assert_eq!(look.cameras.len(), 2);
    }

    fn light_id(model: &MjModel, name: &str) -> usize {
        super::super::light_id(model, name).unwrap()
    }
}
