//! How to start a twin: its scene, physics, cameras, look and render threads.

use crate::board::Board;
use crate::cameras::{CameraProfile, merged, standard_profiles};
use crate::colors::PartColors;
use crate::dynamics::Dynamics;
use crate::error::TwinError;
use crate::look::backdrop::Backdrop;
use crate::look::variations::Variations;
use crate::quality::RenderQuality;
use crate::scene::Scene;
use crate::sim::Sim;

/// Render threads a twin runs unless configured otherwise.
pub const DEFAULT_RENDER_THREADS: usize = 1;

/// How to start a twin.
#[derive(Debug, Clone)]
pub struct TwinConfig {
    /// Scene to load.
    pub scene: Scene,
    /// Physics steps per control tick.
    pub substeps_per_tick: u32,
    /// Image quality of the cameras, unless a drawing asks for another.
    pub render_quality: RenderQuality,
    /// The colours the cameras draw the arms' parts in.
    pub part_colors: PartColors,
    /// Render threads, each with GL contexts of its own (1 to
    /// [`crate::render::MAX_RENDER_THREADS`]): the cameras of one drawing are drawn side by
    /// side, one per thread.
    pub render_threads: usize,
    /// Each arm's identified dynamics, in the scene's arm order (left first in a pair); an arm
    /// without an entry, or with `None`, keeps the model's own. The preview shares the model.
    pub dynamics: Vec<Option<Dynamics>>,
    /// The physics step (s) in place of the model's, which it must divide (the step the
    /// dynamics were identified at; see [`Sim::load_each`]); a tick's period is unchanged.
    /// `None`: the model's own. The preview shares it.
    pub physics_step_s: Option<f64>,
    /// Photos shown behind the foreground of the cameras they name (none by default).
    pub backdrops: Vec<Backdrop>,
    /// The ranges [`TwinHandle::vary`] draws an episode's look within (nothing varies by default).
    pub variations: Variations,
    /// Camera profiles added to the scene's cameras; each replaces the standard profile of its
    /// name (`front`, `wrist`; see [`standard_profiles`]).
    pub cameras: Vec<CameraProfile>,
    /// Flat printed boards the cameras draw in the scene (none by default).
    pub boards: Vec<Board>,
}

impl TwinConfig {
    /// The scene's standard camera profiles with the configured ones over them.
    pub fn camera_profiles(&self) -> Vec<CameraProfile> {
        merged(
            standard_profiles(&self.scene)
                .into_iter()
                .chain(self.cameras.iter().cloned()),
        )
    }

    /// The twin's physics as configured.
    pub(super) fn load(&self) -> Result<Sim, TwinError> {
        Sim::load_dressed(
            &self.scene,
            self.substeps_per_tick,
            &self.dynamics,
            self.physics_step_s,
            &self.camera_profiles(),
            &self.boards,
        )
    }
}

impl Default for TwinConfig {
    fn default() -> Self {
        TwinConfig {
            scene: Scene::Tabletop,
            substeps_per_tick: crate::sim::DEFAULT_SUBSTEPS_PER_TICK,
            render_quality: RenderQuality::default(),
            part_colors: PartColors::default(),
            render_threads: DEFAULT_RENDER_THREADS,
            dynamics: Vec::new(),
            physics_step_s: None,
            backdrops: Vec::new(),
            variations: Variations::default(),
            cameras: Vec::new(),
            boards: Vec::new(),
        }
    }
}
