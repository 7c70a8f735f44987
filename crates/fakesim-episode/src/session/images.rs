//! A call's observation in two halves. Under the session lock the cameras' state is taken and
//! the frames named ([`Engine::shoot`]), and a barrier is put behind the call's journal lines
//! ([`Shot::of`]); once the lock is let go, the frames are drawn on the render thread, encoded
//! and written off the async runtime, and the lines waited for ([`Engine::develop`]). An
//! observation alone journals in the other order (see [`Engine::observation`]).

use super::Engine;
use super::results::{EefState, Images, Observation};
use super::run::{Run, Steps};
use crate::error::EpisodeError;
use crate::journal::{self, Flushed, Frames};
use fakesim_twin::image::{ImageTiming, encode_rgb_png};
use fakesim_twin::{Admission, CameraSnapshot, FrameRoom, RenderQuality, TwinHandle};
use std::time::Instant;

/// Cameras every observation carries, in order.
pub const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];

/// The cameras' state at a point of a run, with the files their frames go to and the room
/// reserved for them in the render backlog; no state when the call asked for no camera.
pub(super) struct Shot {
    snapshot: Option<(CameraSnapshot, FrameRoom)>,
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
    /// Reserves room in the render backlog for the frames of `cameras`, before the action
    /// whose images they are runs: refused at once (`RenderBusy`, with a retry hint) when the
    /// backlog is full, so nothing runs. No camera: no room.
    pub(super) fn reserve(&self, cameras: &[&'static str]) -> Result<Option<FrameRoom>, EpisodeError> {
        if cameras.is_empty() {
            return Ok(None);
        }
        Ok(Some(self.twin.reserve_frames(cameras.len())?))
    }

    /// Takes the state of `cameras` (names of [`CAMERAS`], in its order) now, to be drawn at
    /// `quality` (`None`: the twin's own), the wrist camera `arm`'s (a handle on the arm the
    /// call is about), to be drawn in `room` (reserved by [`Engine::reserve`]), and names their
    /// frames `label` in `run`'s journal. No room (no camera): nothing is taken, named or drawn.
    pub(super) async fn shoot(
        &self,
        run: &mut Run,
        label: &str,
        (cameras, room): (&[&'static str], Option<FrameRoom>),
        quality: Option<RenderQuality>,
        arm: &TwinHandle,
    ) -> Result<Shot, EpisodeError> {
        let started = Instant::now();
        let snapshot = match room {
            Some(room) => Some((self.snapshot(cameras, quality, arm).await?, room)),
            None => None,
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
            Some((snapshot, room)) => Some(
                self.develop_frames(snapshot, &room, shot.cameras, shot.frames, shot.started)
                    .await?,
            ),
            None => None,
        };
        flushed.written().await?;
        Ok(Observation::running(images, state, steps))
    }

    /// Takes the state of `cameras` (names of [`CAMERAS`], at least one) now, to be drawn at
    /// `quality` (`None`: the twin's own), the wrist camera `arm`'s.
    pub(super) async fn snapshot(
        &self,
        cameras: &[&'static str],
        quality: Option<RenderQuality>,
        arm: &TwinHandle,
    ) -> Result<CameraSnapshot, EpisodeError> {
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
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        Ok(self.twin.snapshot_cameras(&names, size, size, false).await?.at(quality))
    }

    /// Draws a snapshot of `cameras` in its reserved `room` (an action's images, never
    /// refused), then encodes and writes their frames off the runtime.
    async fn develop_frames(
        &self,
        snapshot: CameraSnapshot,
        room: &FrameRoom,
        cameras: Vec<&'static str>,
        frames: Frames,
        started: Instant,
    ) -> Result<Images, EpisodeError> {
        let (pngs, timing) = self
            .draw_encoded(snapshot, Admission::Reserved(room), started, Some(frames))
            .await?;
        Ok(images_of(&cameras, pngs, timing))
    }

    /// Draws a snapshot let in as `admission` says and encodes its frames off the runtime,
    /// writing them to `frames` in the same go when given; the PNGs in camera order, and how
    /// long they took since `started`.
    pub(super) async fn draw_encoded(
        &self,
        snapshot: CameraSnapshot,
        admission: Admission<'_>,
        started: Instant,
        frames: Option<Frames>,
    ) -> Result<(Vec<Vec<u8>>, ImageTiming), EpisodeError> {
        let drawn = self.twin.draw_as(snapshot, admission).await?;
        let rendered = Instant::now();
        let encoded = journal::blocking(&self.config.runs_dir, "encoding and writing frames", move || {
            let pngs = drawn.iter().map(encode_rgb_png).collect::<Result<Vec<_>, _>>()?;
            let timing = ImageTiming::since(started, rendered);
            if let Some(frames) = frames {
                frames.write(&pngs)?;
            }
            Ok::<_, EpisodeError>((pngs, timing))
        });
        encoded.await?
    }

    /// Writes encoded frames to their files off the runtime.
    pub(super) async fn write_frames(&self, frames: Frames, pngs: Vec<Vec<u8>>) -> Result<(), EpisodeError> {
        let written = journal::blocking(&self.config.runs_dir, "writing frames", move || frames.write(&pngs));
        Ok(written.await??)
    }
}

/// The images of `cameras` (names of [`CAMERAS`]) from their PNGs, in the same order.
pub(super) fn images_of(cameras: &[&'static str], pngs: Vec<Vec<u8>>, timing: ImageTiming) -> Images {
    let mut images = Images {
        agentview: Vec::new(),
        robot0_eye_in_hand: Vec::new(),
        timing,
    };
    for (&camera, png) in cameras.iter().zip(pngs) {
        match camera {
            "agentview" => images.agentview = png,
            _ => images.robot0_eye_in_hand = png,
        }
    }
    images
}
