//! The lock-step tick's observation vector and camera frames.

use crate::wire::convert::render_quality;
use crate::wire::status;
use fakesim_proto::v1;
use fakesim_twin::image::{ImageTiming, depth_to_mm, encode_depth_png, encode_rgb_png};
use fakesim_twin::joints::Joint;
use fakesim_twin::values::ValueError;
use fakesim_twin::{
    Admission, CameraSnapshot, Frame, FrameRoom, ModelInfo, RenderQuality, RobotState, Sim, TwinError, TwinHandle,
};
use std::time::Instant;
use tonic::Status;

/// Names of the observation entries, in order: joint positions (rad), joint velocities (rad/s),
/// TCP position (m, world), TCP orientation quaternion (w, x, y, z), gripper opening (m).
pub fn observation_keys() -> Vec<String> {
    let joints = |prefix: &'static str| Joint::ALL.iter().map(move |j| format!("{prefix}.{}", j.label()));
    joints("pos")
        .chain(joints("vel"))
        .chain(["x", "y", "z"].map(|axis| format!("tcp_pos.{axis}")))
        .chain(["w", "x", "y", "z"].map(|part| format!("tcp_quat.{part}")))
        .chain(["gripper_opening_m".to_owned()])
        .collect()
}

/// The observation vector of a state, laid out as [`observation_keys`].
pub fn observation(state: &RobotState) -> Vec<f64> {
    state
        .qpos
        .iter()
        .chain(&state.qvel)
        .chain(&state.tcp.pos)
        .chain(&state.tcp.quat)
        .chain([&state.gripper_opening_m])
        .copied()
        .collect()
}

/// How depth frames are sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DepthFormat {
    Png,
    Raw,
}

/// The frames a tick must render, checked before the tick runs so a bad request changes nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageRequest {
    cameras: Vec<String>,
    width: u32,
    height: u32,
    depth: Option<DepthFormat>,
    raw_color: bool,
    /// `None`: the daemon's `--render-quality`.
    quality: Option<RenderQuality>,
}

impl ImageRequest {
    /// The image part of a tick request (`None` without `want_images`), with the defaults
    /// filled in: `default_size` for a 0 width or height, PNG depth. Only the cameras the
    /// request names are drawn: `want_images` naming none is refused (it once meant every
    /// camera, so an old client is told rather than answered without frames).
    pub fn from_request(
        request: &v1::TickRequest,
        model: &ModelInfo,
        default_size: u32,
    ) -> Result<Option<Self>, Status> {
        if !request.want_images {
            return Ok(None);
        }
        if request.cameras.is_empty() {
            return Err(status::invalid_argument(
                "cameras",
                format!(
                    "want_images names no camera; list the cameras to draw (known: {})",
                    model.cameras.join(", ")
                ),
            ));
        }
        let unknown: Vec<String> = request
            .cameras
            .iter()
            .filter(|c| !model.cameras.contains(c))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(status::from_twin(&TwinError::Value(ValueError::UnknownName {
                kind: "camera",
                unknown,
                known: model.cameras.clone(),
            })));
        }
        let cameras = request.cameras.clone();
        let or_default = |size: u32| if size == 0 { default_size } else { size };
        let (width, height) = (or_default(request.width), or_default(request.height));
        let (max_width, max_height) = model.max_image;
        if width > max_width || height > max_height {
            return Err(status::from_twin(&TwinError::ImageSize {
                width,
                height,
                max_width,
                max_height,
            }));
        }
        let depth = match v1::DepthEncoding::try_from(request.depth_encoding) {
            _ if !request.want_depth => None,
            Ok(v1::DepthEncoding::Unspecified | v1::DepthEncoding::Png) => Some(DepthFormat::Png),
            Ok(v1::DepthEncoding::Raw) => Some(DepthFormat::Raw),
            Err(_) => {
                return Err(status::invalid_argument(
                    "depth_encoding",
                    format!("depth_encoding={} is not a DepthEncoding value", request.depth_encoding),
                ));
            }
        };
        let raw_color = match v1::ColorEncoding::try_from(request.color_encoding) {
            Ok(v1::ColorEncoding::Unspecified | v1::ColorEncoding::Png) => false,
            Ok(v1::ColorEncoding::Raw) => true,
            Err(_) => {
                return Err(status::invalid_argument(
                    "color_encoding",
                    format!("color_encoding={} is not a ColorEncoding value", request.color_encoding),
                ));
            }
        };
        Ok(Some(ImageRequest {
            cameras,
            width,
            height,
            depth,
            raw_color,
            quality: render_quality(request.render_quality)?,
        }))
    }

    /// How many frames the request draws at once (one a camera).
    pub fn frames(&self) -> usize {
        self.cameras.len()
    }

    /// Takes the twin's current state for the requested cameras (a short physics job); hold the
    /// drive lock for this, not for [`Self::draw`].
    pub async fn snapshot(&self, twin: &TwinHandle) -> Result<CameraSnapshot, Status> {
        let request = self.clone();
        twin.try_with_sim(move |sim| request.snapshot_on(sim))
            .await
            .map_err(|e| status::from_twin(&e))
    }

    /// [`Self::snapshot`] on the physics thread, inside a job that owns `sim`.
    pub fn snapshot_on(&self, sim: &Sim) -> Result<CameraSnapshot, TwinError> {
        CameraSnapshot::take(sim, &self.cameras, self.width, self.height, self.depth.is_some())
            .map(|shot| shot.at(self.quality))
    }

    /// Draws a snapshot's cameras in the room reserved for them before the tick ran, and
    /// encodes the frames, in request order; also returns how long each part took.
    pub async fn render(
        &self,
        twin: &TwinHandle,
        shot: CameraSnapshot,
        room: &FrameRoom,
    ) -> Result<(Vec<v1::CameraFrame>, ImageTiming), Status> {
        let started = Instant::now();
        let frames = twin
            .draw_as(shot, Admission::Reserved(room))
            .await
            .map_err(|e| status::from_twin(&e))?;
        let drawn = Instant::now();
        let frames = self.encode(self.cameras.iter().cloned().zip(frames).collect())?;
        Ok((frames, ImageTiming::since(started, drawn)))
    }

    /// Encodes rendered frames: colour as PNG or raw RGB, depth as PNG or raw codes, as asked.
    fn encode(&self, frames: Vec<(String, Frame)>) -> Result<Vec<v1::CameraFrame>, Status> {
        frames
            .into_iter()
            .map(|(camera, mut frame)| {
                let (color_png, color_raw) = if self.raw_color {
                    (Vec::new(), std::mem::take(&mut frame.rgb))
                } else {
                    let png = encode_rgb_png(&frame).map_err(|e| status::from_encode(&e))?;
                    (png, Vec::new())
                };
                let depth = match self.depth {
                    None => None,
                    Some(DepthFormat::Png) => encode_depth_png(&frame)
                        .map_err(|e| status::from_encode(&e))?
                        .map(v1::camera_frame::Depth::DepthPng),
                    Some(DepthFormat::Raw) => frame.depth.as_deref().map(|metres| {
                        let bytes = depth_to_mm(metres).iter().flat_map(|mm| mm.to_le_bytes()).collect();
                        v1::camera_frame::Depth::DepthRaw(bytes)
                    }),
                };
                Ok(v1::CameraFrame {
                    camera,
                    width: frame.width,
                    height: frame.height,
                    color_png,
                    color_raw,
                    depth,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use fakesim_twin::Pose;

    #[test]
    fn observation_matches_its_keys() {
        let state = RobotState {
            time: 0.0,
            qpos: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            qvel: [7.0, 8.0, 9.0, 10.0, 11.0, 12.0],
            ctrl: [0.0; 6],
            tcp: Pose {
                pos: [13.0, 14.0, 15.0],
                quat: [16.0, 17.0, 18.0, 19.0],
            },
            gripper_opening_m: 20.0,
        };
        let keys = observation_keys();
        let values = observation(&state);
        assert_eq!(keys.len(), values.len());
        assert_eq!(values, (1..=20).map(f64::from).collect::<Vec<_>>());
        assert_eq!(keys[0], "pos.shoulder_pan");
        assert_eq!(keys[11], "vel.gripper");
        assert_eq!(keys[12], "tcp_pos.x");
        assert_eq!(keys[15], "tcp_quat.w");
        assert_eq!(keys[19], "gripper_opening_m");
    }
}
