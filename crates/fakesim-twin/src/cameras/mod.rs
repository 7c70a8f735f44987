//! Camera profiles: cameras shaped like the user's (name, resolution, intrinsics, pose, lens
//! distortion), read from TOML and added to the twin's model at load.
//!
//! A profile is a TOML table (the contract every tool that reads or writes one shares):
//! `name`, `width`, `height`, either `fovy-deg` or `fx`, `fy`, `cx`, `cy` (pixels, OpenCV's
//! convention: pixel centres at whole numbers), `pos` (m) and `quat` (w, x, y, z; MuJoCo's camera
//! convention, looking along its -z with +y up in the image), optionally `mount` (a body the
//! camera rides on) and `distortion` (OpenCV's k1, k2, p1, p2, k3).

use fakesim_arm::quote::Quoted;
use serde::{Deserialize, Serialize};
use thiserror::Error;

mod distortion;
mod model;
mod standard;

pub use distortion::Distortion;
pub(crate) use model::{add_profiles, distortions, fit_offscreen, frame_sizes};
pub use standard::standard_profiles;

/// Most pixels a profile's image may have on a side.
pub const MAX_PROFILE_PIXELS: u32 = 4096;
/// Most characters of a profile's camera name (and of its mount's body name).
pub const MAX_NAME_CHARS: usize = 64;

/// A camera shaped like a user's, as its TOML profile describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CameraProfile {
    /// The camera's name: frames carry it, LeRobot's features are named after it.
    pub name: String,
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// Vertical field of view, degrees (instead of `fx` .. `cy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fovy_deg: Option<f64>,
    /// Horizontal focal length, pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fx: Option<f64>,
    /// Vertical focal length, pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fy: Option<f64>,
    /// Principal point's column, pixels from the left pixel's centre.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cx: Option<f64>,
    /// Principal point's row, pixels from the top pixel's centre.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cy: Option<f64>,
    /// Position, metres: in the world, or in `mount`'s frame.
    pub pos: [f64; 3],
    /// Orientation (w, x, y, z) in MuJoCo's camera convention, in the world or in `mount`'s frame.
    pub quat: [f64; 4],
    /// The body the camera rides on; none: fixed in the world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<String>,
    /// OpenCV's radial-tangential distortion k1, k2, p1, p2, k3, applied to the drawn frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distortion: Option<[f64; 5]>,
}

/// The lens of a profile: a vertical field of view, or intrinsics in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Lens {
    /// Vertical field of view, degrees; the principal point at the image's centre.
    Fovy(f64),
    /// Focal lengths and principal point, pixels (OpenCV's convention).
    Pixels {
        /// Horizontal focal length.
        fx: f64,
        /// Vertical focal length.
        fy: f64,
        /// Principal point's column.
        cx: f64,
        /// Principal point's row.
        cy: f64,
    },
}

/// A profile that cannot be used, and why; names the profile and the key at fault.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("camera profile {profile}: {problem}")]
pub struct BadProfile {
    /// The profile: its name quoted, or where it came from when it has none yet.
    pub profile: String,
    /// What is wrong, naming the key.
    pub problem: String,
}

impl CameraProfile {
    /// Reads and checks one profile from a TOML document (a `--camera` file); `origin` names it
    /// in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, BadProfile> {
        let profile: CameraProfile = toml::from_str(text).map_err(|e| BadProfile {
            profile: origin.to_owned(),
            problem: e.to_string().trim_end().to_owned(),
        })?;
        profile.checked().map_err(|e| BadProfile {
            profile: format!("{} of {origin}", e.profile),
            ..e
        })
    }

    /// Reads and checks one profile from a table (a config file's `[[camera]]` entry); `origin`
    /// names it in errors. The table is written back as TOML and read as [`Self::from_toml`]
    /// does, so a wrong value's error quotes its `key = value` line.
    pub fn from_table(table: &toml::Table, origin: &str) -> Result<Self, BadProfile> {
        let text = toml::to_string(table).map_err(|e| BadProfile {
            profile: origin.to_owned(),
            problem: e.to_string(),
        })?;
        Self::from_toml(&text, origin)
    }

    /// The profile as TOML, as [`Self::from_toml`] reads it.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// The lens the profile describes (checked profiles have exactly one).
    pub fn lens(&self) -> Lens {
        match (self.fovy_deg, self.fx, self.fy, self.cx, self.cy) {
            (_, Some(fx), Some(fy), Some(cx), Some(cy)) => Lens::Pixels { fx, fy, cx, cy },
            (fovy, ..) => Lens::Fovy(fovy.unwrap_or(45.0)),
        }
    }

    /// The profile, if every value is one the twin can draw; else the first problem, naming
    /// its key.
    pub fn checked(mut self) -> Result<Self, BadProfile> {
        let bad = |profile: &CameraProfile, problem: String| BadProfile {
            profile: Quoted(&profile.name).to_string(),
            problem,
        };
        if let Err(problem) = check_name("name", &self.name) {
            return Err(bad(&self, problem));
        }
        if let Some(Err(problem)) = self.mount.as_deref().map(|mount| check_name("mount", mount)) {
            return Err(bad(&self, problem));
        }
        for (key, value) in [("width", self.width), ("height", self.height)] {
            if !(1..=MAX_PROFILE_PIXELS).contains(&value) {
                return Err(bad(
                    &self,
                    format!("`{key}` must be from 1 to {MAX_PROFILE_PIXELS} pixels, got {value}"),
                ));
            }
        }
        if let Err(problem) = self.check_lens() {
            return Err(bad(&self, problem));
        }
        if !self.pos.iter().all(|v| v.is_finite()) {
            return Err(bad(
                &self,
                format!("`pos` must be three finite metres, got {:?}", self.pos),
            ));
        }
        let norm = self.quat.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !(norm.is_finite() && norm > 1e-9) {
            return Err(bad(
                &self,
                format!(
                    "`quat` must be a finite, non-zero quaternion w, x, y, z, got {:?}",
                    self.quat
                ),
            ));
        }
        self.quat = self.quat.map(|v| v / norm);
        if let Some(k) = self.distortion
            && !k.iter().all(|v| v.is_finite())
        {
            return Err(bad(
                &self,
                format!("`distortion` must be five finite numbers, got {k:?}"),
            ));
        }
        Ok(self)
    }

    /// Exactly one lens: `fovy-deg` in (0, 180), or all four of `fx`, `fy` (positive) and `cx`,
    /// `cy` (inside the image).
    fn check_lens(&self) -> Result<(), String> {
        let intrinsics = [("fx", self.fx), ("fy", self.fy), ("cx", self.cx), ("cy", self.cy)];
        let given: Vec<&str> = intrinsics
            .iter()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| *k)
            .collect();
        match (self.fovy_deg, given.len()) {
            (Some(_), 1..) => Err(format!(
                "give either `fovy-deg` or `fx`, `fy`, `cx`, `cy`, not both (`fovy-deg` and `{}` are set)",
                given.join("`, `")
            )),
            (Some(fovy), 0) if !(fovy.is_finite() && fovy > 0.0 && fovy < 180.0) => {
                Err(format!("`fovy-deg` must be above 0 and below 180 degrees, got {fovy}"))
            }
            (Some(_), 0) => Ok(()),
            (None, 0) => Err("a lens is needed: `fovy-deg`, or `fx`, `fy`, `cx` and `cy` (pixels)".to_owned()),
            (None, 1..=3) => {
                let missing: Vec<&str> = intrinsics
                    .iter()
                    .filter(|(_, v)| v.is_none())
                    .map(|(k, _)| *k)
                    .collect();
                Err(format!(
                    "`{}` missing: give all of `fx`, `fy`, `cx`, `cy`",
                    missing.join("`, `")
                ))
            }
            (None, _) => {
                let sides = [("fx", self.fx, None), ("fy", self.fy, None)]
                    .into_iter()
                    .chain([("cx", self.cx, Some(self.width)), ("cy", self.cy, Some(self.height))]);
                for (key, value, side) in sides {
                    let value = value.unwrap_or(f64::NAN);
                    match side {
                        None if !(value.is_finite() && value > 0.0) => {
                            return Err(format!(
                                "`{key}` must be a positive, finite focal length in pixels, got {value}"
                            ));
                        }
                        Some(side) if !(value.is_finite() && (-0.5..=f64::from(side) - 0.5).contains(&value)) => {
                            return Err(format!(
                                "`{key}` must lie in the image, from -0.5 to {} pixels, got {value}",
                                f64::from(side) - 0.5
                            ));
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
        }
    }
}

/// A camera or body name: 1 to [`MAX_NAME_CHARS`] letters, digits, `_`, `-`, `.` or `/`.
fn check_name(key: &str, name: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS || !name.chars().all(allowed) {
        return Err(format!(
            "`{key}` must be 1 to {MAX_NAME_CHARS} letters, digits, `_`, `-`, `.` or `/`, got {}",
            Quoted(name)
        ));
    }
    Ok(())
}

/// `profiles` with every later profile replacing an earlier one of the same name, in first-seen
/// order.
pub fn merged(profiles: impl IntoIterator<Item = CameraProfile>) -> Vec<CameraProfile> {
    let mut out: Vec<CameraProfile> = Vec::new();
    for profile in profiles {
        match out.iter_mut().find(|p| p.name == profile.name) {
            Some(slot) => *slot = profile,
            None => out.push(profile),
        }
    }
    out
}

#[cfg(test)]
mod tests;
