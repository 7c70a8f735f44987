//! A drawing's cameras and the state they are drawn from, taken on the physics thread.

use crate::cameras::frame_sizes;
use crate::error::TwinError;
use crate::quality::RenderQuality;
use crate::sim::{RenderSnapshot, Sim};

/// Cameras to draw and the state to draw them from (see [`TwinHandle::snapshot_cameras`]).
#[derive(Debug, Clone)]
pub struct CameraSnapshot {
    pub(super) snapshot: RenderSnapshot,
    /// `None`: the twin's own quality (its config's).
    pub(super) quality: Option<RenderQuality>,
    /// Each camera's id and the size its frame is drawn at.
    pub(super) cameras: Vec<(usize, (u32, u32))>,
    pub(super) depth: bool,
}

impl CameraSnapshot {
    /// Checks a camera request against `sim`'s model and takes its state to draw them from (on
    /// the physics thread, which owns `sim`). A camera with a resolution of its own (a camera
    /// profile's) is drawn at that; the others at `width` x `height`.
    pub fn take(sim: &Sim, cameras: &[String], width: u32, height: u32, depth: bool) -> Result<Self, TwinError> {
        let (max_width, max_height) = sim.model_info().max_image;
        if width == 0 || height == 0 || width > max_width || height > max_height {
            return Err(TwinError::ImageSize {
                width,
                height,
                max_width,
                max_height,
            });
        }
        let sizes = frame_sizes(sim.model());
        let cameras = cameras
            .iter()
            .map(|name| {
                let id = sim.camera_id(name)?;
                Ok((id, sizes.get(id).copied().flatten().unwrap_or((width, height))))
            })
            .collect::<Result<Vec<_>, TwinError>>()?;
        Ok(CameraSnapshot {
            snapshot: sim.render_snapshot(),
            quality: None,
            cameras,
            depth,
        })
    }

    /// The same snapshot, drawn at `quality` (`None`: the twin's own).
    pub fn at(self, quality: Option<RenderQuality>) -> Self {
        CameraSnapshot { quality, ..self }
    }
}
