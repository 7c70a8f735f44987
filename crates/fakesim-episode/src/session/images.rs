//! A call's camera images in two halves: the state is taken and the frames named under the
//! session lock ([`Engine::shoot`]); they are drawn on the render thread, then encoded and
//! written off the async runtime once the lock is let go ([`Engine::develop`]).

use super::Engine;
use super::results::Images;
use crate::error::EpisodeError;
use crate::journal::{Frames, Journal, io_at};
use fakesim_twin::image::{ImageTiming, encode_rgb_png};
use fakesim_twin::{CameraSnapshot, RenderQuality};
use std::time::Instant;

/// Cameras every observation carries, in order.
pub const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];

/// The cameras' state at a point of a run, with the files their frames go to.
pub(super) struct Shot {
    snapshot: CameraSnapshot,
    frames: Frames,
    started: Instant,
}

impl Engine {
    /// Takes the cameras' state now (drawn at `quality`, `None`: the twin's own) and names
    /// their frames `label` in `journal`.
    pub(super) async fn shoot(
        &self,
        journal: &mut Journal,
        label: &str,
        quality: Option<RenderQuality>,
    ) -> Result<Shot, EpisodeError> {
        let started = Instant::now();
        let size = self.config.image_size;
        let snapshot = self.twin.snapshot_cameras(&CAMERAS, size, size, false).await?;
        Ok(Shot {
            snapshot: snapshot.at(quality),
            frames: journal.frames(label, &CAMERAS),
            started,
        })
    }

    /// Draws a shot, encodes its frames and writes them to the journal; call it without the
    /// session lock.
    pub(super) async fn develop(&self, shot: Shot) -> Result<Images, EpisodeError> {
        let Shot {
            snapshot,
            frames,
            started,
        } = shot;
        let drawn = self.twin.draw(snapshot).await?;
        let rendered = Instant::now();
        let encoded = tokio::task::spawn_blocking(move || {
            let pngs = drawn.iter().map(encode_rgb_png).collect::<Result<Vec<_>, _>>()?;
            let timing = ImageTiming::since(started, rendered);
            frames.write(&pngs)?;
            Ok::<_, EpisodeError>((pngs, timing))
        })
        .await;
        let (mut pngs, timing) = encoded.map_err(|e| {
            io_at(&self.config.runs_dir)(std::io::Error::other(format!("encoding and writing frames: {e}")))
        })??;
        let robot0_eye_in_hand = pngs.pop().unwrap_or_default();
        let agentview = pngs.pop().unwrap_or_default();
        Ok(Images {
            agentview,
            robot0_eye_in_hand,
            timing,
        })
    }
}
