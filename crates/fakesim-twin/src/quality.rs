//! How much of MuJoCo's look the cameras draw: the scene as written, or a fast level without
//! the effects that cost most under software GL.

use mujoco_rs::prelude::*;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Image quality of the twin's cameras.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RenderQuality {
    /// No offscreen multisampling, no shadows, no reflections: the same scene, same colours and
    /// lighting, with hard edges.
    Fast,
    /// The scene as written in the model (4x multisampling, shadow maps, the floor's reflection).
    #[default]
    Full,
}

/// A quality name that is not one of the levels.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown render quality {0:?}; known: fast, full")]
pub struct UnknownQuality(pub String);

impl RenderQuality {
    /// Every level, fastest first.
    pub const ALL: [RenderQuality; 2] = [RenderQuality::Fast, RenderQuality::Full];

    /// The level's name as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            RenderQuality::Fast => "fast",
            RenderQuality::Full => "full",
        }
    }

    /// The model the renderer draws at this level: a copy of `model` with the costly effects
    /// switched off, or the model itself at `Full`.
    pub(crate) fn render_model(self, model: &MjModel) -> MjModel {
        let mut model = model.clone();
        if self == RenderQuality::Fast {
            model.vis_mut().quality.offsamples = 0;
            model.light_castshadow_mut().fill(false);
            model.mat_reflectance_mut().fill(0.0);
        }
        model
    }
}

impl fmt::Display for RenderQuality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RenderQuality {
    type Err = UnknownQuality;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RenderQuality::ALL
            .into_iter()
            .find(|q| q.name() == s)
            .ok_or_else(|| UnknownQuality(s.chars().take(32).collect()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::scene::Scene;

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        for q in RenderQuality::ALL {
            assert_eq!(q.name().parse::<RenderQuality>().unwrap(), q);
        }
        let err = "ultra".parse::<RenderQuality>().unwrap_err();
        assert!(err.to_string().contains("fast, full"), "{err}");
    }

    #[test]
    fn fast_switches_off_multisampling_shadows_and_reflections_only() {
        let model = Scene::Tabletop.compile().unwrap();
        assert!(model.vis().quality.offsamples > 0);
        assert!(model.light_castshadow().iter().any(|&s| s));
        assert!(model.mat_reflectance().iter().any(|&r| r > 0.0));
        let full = RenderQuality::Full.render_model(&model);
        assert_eq!(full.vis().quality.offsamples, model.vis().quality.offsamples);
        assert_eq!(full.light_castshadow(), model.light_castshadow());
        let fast = RenderQuality::Fast.render_model(&model);
        assert_eq!(fast.vis().quality.offsamples, 0);
        assert!(fast.light_castshadow().iter().all(|&s| !s));
        assert!(fast.mat_reflectance().iter().all(|&r| r == 0.0));
        assert_eq!(fast.mat_rgba(), model.mat_rgba());
        assert_eq!(fast.light_diffuse(), model.light_diffuse());
    }
}
