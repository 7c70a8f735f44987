//! The renderer's own thread: MuJoCo's GL renderer is not `Send`, so it lives here and is fed
//! state snapshots.

use crate::error::TwinError;
use crate::handle::guarded;
use crate::lifeline::Lifeline;
use crate::quality::RenderQuality;
use crate::sim::RenderSnapshot;
use crate::worker::{Jobs, Worker};
use mujoco_rs::prelude::*;
use mujoco_rs::renderer::MjRenderer;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::oneshot;

/// A rendered camera image.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// RGB bytes, row-major from the top row.
    pub rgb: Vec<u8>,
    /// Depth in metres per pixel, when asked for.
    pub depth: Option<Vec<f32>>,
}

/// Frames of one or more cameras to draw from one state.
pub(crate) struct RenderJob {
    pub snapshot: RenderSnapshot,
    pub cameras: Vec<usize>,
    pub width: u32,
    pub height: u32,
    pub depth: bool,
    pub reply: oneshot::Sender<Result<Vec<Frame>, TwinError>>,
}

/// Sends jobs to the render thread; [`RenderQueue::stop`] ends it.
pub(crate) struct RenderQueue {
    worker: Worker<RenderJob>,
}

impl RenderQueue {
    /// Starts the render thread for a model, drawing at `quality`; the thread holds `lifeline`.
    pub fn spawn(model: &MjModel, quality: RenderQuality, lifeline: Lifeline) -> Result<Self, TwinError> {
        let model = Arc::new(quality.render_model(model));
        let worker = Worker::spawn("render", lifeline, move |jobs| RenderThread::new(model).run(jobs))
            .map_err(|e| TwinError::RenderUnavailable(format!("cannot start the render thread: {e}")))?;
        Ok(RenderQueue { worker })
    }

    /// Ends the render thread after the jobs already queued and waits for it (idempotent).
    pub fn stop(&self) {
        self.worker.stop();
    }

    /// Draws the frames of one job.
    pub async fn render(
        &self,
        job: impl FnOnce(oneshot::Sender<Result<Vec<Frame>, TwinError>>) -> RenderJob,
    ) -> Result<Vec<Frame>, TwinError> {
        let (reply, rx) = oneshot::channel();
        self.worker.send(job(reply))?;
        rx.await.map_err(|_| TwinError::Stopped)?
    }
}

struct RenderThread {
    data: MjData<Arc<MjModel>>,
    renderers: HashMap<(u32, u32), MjRenderer>,
    unavailable: Option<String>,
}

impl RenderThread {
    fn new(model: Arc<MjModel>) -> Self {
        RenderThread {
            data: MjData::new(model),
            renderers: HashMap::new(),
            unavailable: None,
        }
    }

    fn run(mut self, jobs: Jobs<RenderJob>) {
        for job in jobs {
            let result = guarded("render", || self.draw(&job)).and_then(|frames| frames);
            if result.as_ref().is_err_and(|e| matches!(e, TwinError::Fault { .. })) {
                // A context a panic interrupted is not trusted again: fresh ones are made.
                self.renderers.clear();
            }
            // The caller may have given up waiting; nothing to do then.
            let _ = job.reply.send(result);
        }
    }

    fn draw(&mut self, job: &RenderJob) -> Result<Vec<Frame>, TwinError> {
        if let Some(reason) = &self.unavailable {
            return Err(TwinError::RenderUnavailable(reason.clone()));
        }
        // Drawing needs only the poses of bodies, geoms, cameras and lights.
        job.snapshot
            .pose(&mut self.data)
            .map_err(TwinError::RenderUnavailable)?;
        self.data.camlight();
        let renderer = renderer(
            &mut self.renderers,
            &mut self.unavailable,
            self.data.model(),
            job.width,
            job.height,
        )?;
        if renderer.depth_enabled() != job.depth {
            renderer.set_depth_rendering(job.depth);
        }
        let fail = |e: mujoco_rs::renderer::RendererError| TwinError::RenderUnavailable(e.to_string());
        let mut frames = Vec::with_capacity(job.cameras.len());
        for &camera in &job.cameras {
            renderer.set_camera(MjvCamera::new_fixed(camera));
            renderer.sync_data(&mut self.data).map_err(fail)?;
            renderer.render().map_err(fail)?;
            frames.push(Frame {
                width: job.width,
                height: job.height,
                rgb: renderer.rgb_flat().map(<[u8]>::to_vec).unwrap_or_default(),
                depth: renderer.depth_flat().map(<[f32]>::to_vec),
            });
        }
        Ok(frames)
    }
}

/// The renderer of one image size, made on first use; one GL context serves every camera. A
/// failure to make one marks rendering unavailable for good.
fn renderer<'a>(
    renderers: &'a mut HashMap<(u32, u32), MjRenderer>,
    unavailable: &mut Option<String>,
    model: &MjModel,
    width: u32,
    height: u32,
) -> Result<&'a mut MjRenderer, TwinError> {
    use std::collections::hash_map::Entry;
    match renderers.entry((width, height)) {
        Entry::Occupied(entry) => Ok(entry.into_mut()),
        Entry::Vacant(entry) => match MjRenderer::builder().width(width).height(height).rgb(true).build(model) {
            Ok(renderer) => Ok(entry.insert(renderer)),
            Err(e) => {
                let reason = format!(
                    "no usable EGL device ({e}); install an EGL driver such as Debian's \
                     libegl1, libegl-mesa0 and libgl1-mesa-dri (software rendering works)"
                );
                tracing::warn!(%reason, "offscreen rendering disabled; physics keeps running");
                *unavailable = Some(reason.clone());
                Err(TwinError::RenderUnavailable(reason))
            }
        },
    }
}
