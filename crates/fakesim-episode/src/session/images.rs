//! A call's observation in two halves. Under the session lock the cameras' state is taken and
//! the frames named ([`Engine::shoot`]), and a barrier is put behind the call's journal lines
//! ([`Shot::of`]); once the lock is let go, the frames are drawn on the render thread, encoded
//! and written off the async runtime, and the lines waited for ([`Engine::develop`]).

use super::Engine;
use super::results::{EefState, Images, Observation};
use super::run::{Run, Steps};
use crate::error::EpisodeError;
use crate::journal::{self, Flushed, Frames};
use fakesim_twin::image::{ImageTiming, encode_rgb_png};
use fakesim_twin::{CameraSnapshot, RenderQuality, TwinHandle};
use std::time::Instant;

/// Cameras every observation carries, in order.
pub const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];

/// The cameras' state at a point of a run, with the files their frames go to; no state when
/// the call asked for no camera.
pub(super) struct Shot {
    snapshot: Option<CameraSnapshot>,
    cameras: Vec<&'static str>,
    frames: Frames,
    started: Instant,
}

impl Shot {
    /// The observation of `run` this shot belongs to, its arm in `state`, with a barrier
    /// behind every line journaled so far.
    pub(super) fn of(self, run: &Run, state: EefState) -> Snapped {
        Snapped {
            shot: self,
            state,
            steps: run.steps(),
            flushed: run.journal.flushed(),
        }
    }
}

/// An observation of a run taken under the session lock, its images not drawn yet.
pub(super) struct Snapped {
    shot: Shot,
    state: EefState,
    steps: Steps,
    flushed: Flushed,
}

impl Engine {
    /// Takes the state of `cameras` (names of [`CAMERAS`], in its order) now, to be drawn at
    /// `quality` (`None`: the twin's own), the wrist camera `arm`'s (a handle on the arm the
    /// call is about), and names their frames `label` in `run`'s journal. No camera: nothing
    /// is taken, named or drawn.
    pub(super) async fn shoot(
        &self,
        run: &mut Run,
        label: &str,
        cameras: &[&'static str],
        quality: Option<RenderQuality>,
        arm: &TwinHandle,
    ) -> Result<Shot, EpisodeError> {
        let started = Instant::now();
        let size = self.config.image_size;
        // The wrist camera of the arm the call is about (on a pair `left/robot0_eye_in_hand`
        // or `right/…`).
        let names: Vec<String> = cameras
            .iter()
            .map(|&camera| match camera {
                "agentview" => camera.to_owned(),
                _ => arm.arm().part_name(camera),
            })
            .collect();
        let snapshot = if names.is_empty() {
            None
        } else {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            Some(self.twin.snapshot_cameras(&names, size, size, false).await?.at(quality))
        };
        Ok(Shot {
            snapshot,
            cameras: cameras.to_vec(),
            frames: run.journal.frames(label, cameras),
            started,
        })
    }

    /// Draws, encodes and writes a snapped observation's frames, and waits for its journal
    /// lines; call it without the session lock.
    pub(super) async fn develop(&self, snapped: Snapped) -> Result<Observation, EpisodeError> {
        let Snapped {
            shot,
            state,
            steps,
            flushed,
        } = snapped;
        let images = match shot.snapshot {
            Some(snapshot) => Some(
                self.develop_frames(snapshot, shot.cameras, shot.frames, shot.started)
                    .await?,
            ),
            None => None,
        };
        flushed.written().await?;
        Ok(Observation::running(images, state, steps))
    }

    /// Draws a snapshot of `cameras`, then encodes and writes their frames off the runtime.
    async fn develop_frames(
        &self,
        snapshot: CameraSnapshot,
        cameras: Vec<&'static str>,
        frames: Frames,
        started: Instant,
    ) -> Result<Images, EpisodeError> {
        let drawn = self.twin.draw(snapshot).await?;
        let rendered = Instant::now();
        let encoded = journal::blocking(&self.config.runs_dir, "encoding and writing frames", move || {
            let pngs = drawn.iter().map(encode_rgb_png).collect::<Result<Vec<_>, _>>()?;
            let timing = ImageTiming::since(started, rendered);
            frames.write(&pngs)?;
            Ok::<_, EpisodeError>((pngs, timing))
        });
        let (pngs, timing) = encoded.await??;
        let mut images = Images {
            agentview: Vec::new(),
            robot0_eye_in_hand: Vec::new(),
            timing,
        };
        for (camera, png) in cameras.into_iter().zip(pngs) {
            match camera {
                "agentview" => images.agentview = png,
                _ => images.robot0_eye_in_hand = png,
            }
        }
        Ok(images)
    }
}
