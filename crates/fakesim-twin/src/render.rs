//! The renderer's own thread: MuJoCo's GL renderer is not `Send`, so it lives here and is fed
//! state snapshots.

use crate::error::TwinError;
use crate::sim::{RENDER_STATE, RenderSnapshot};
use mujoco_rs::prelude::*;
use mujoco_rs::renderer::MjRenderer;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::mpsc;
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

/// One frame to draw.
pub(crate) struct RenderJob {
    pub snapshot: RenderSnapshot,
    pub camera: usize,
    pub width: u32,
    pub height: u32,
    pub depth: bool,
    pub reply: oneshot::Sender<Result<Frame, TwinError>>,
}

/// Sends jobs to the render thread.
#[derive(Clone)]
pub(crate) struct RenderQueue(mpsc::Sender<RenderJob>);

impl RenderQueue {
    /// Starts the render thread for a model.
    pub fn spawn(model: Arc<MjModel>) -> Result<Self, TwinError> {
        let (tx, rx) = mpsc::channel::<RenderJob>();
        std::thread::Builder::new()
            .name("twin-render".into())
            .spawn(move || RenderThread::new(model).run(rx))
            .map_err(|e| TwinError::RenderUnavailable(format!("cannot start the render thread: {e}")))?;
        Ok(RenderQueue(tx))
    }

    /// Draws one frame.
    pub async fn render(
        &self,
        job: impl FnOnce(oneshot::Sender<Result<Frame, TwinError>>) -> RenderJob,
    ) -> Result<Frame, TwinError> {
        let (reply, rx) = oneshot::channel();
        self.0.send(job(reply)).map_err(|_| TwinError::Stopped)?;
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

    fn run(mut self, jobs: mpsc::Receiver<RenderJob>) {
        while let Ok(job) = jobs.recv() {
            let result = self.draw(&job);
            // The caller may have given up waiting; nothing to do then.
            let _ = job.reply.send(result);
        }
    }

    fn draw(&mut self, job: &RenderJob) -> Result<Frame, TwinError> {
        if let Some(reason) = &self.unavailable {
            return Err(TwinError::RenderUnavailable(reason.clone()));
        }
        self.data
            .set_state(&job.snapshot.0, RENDER_STATE)
            .map_err(|e| TwinError::RenderUnavailable(format!("snapshot does not fit the model: {e}")))?;
        self.data.forward();
        let key = (job.width, job.height);
        if !self.renderers.contains_key(&key) {
            let built = MjRenderer::builder()
                .width(job.width)
                .height(job.height)
                .rgb(true)
                .depth(true)
                .build(self.data.model());
            match built {
                Ok(renderer) => {
                    self.renderers.insert(key, renderer);
                }
                Err(e) => {
                    let reason = format!(
                        "no usable EGL device ({e}); install an EGL driver such as Debian's \
                         libegl1, libegl-mesa0 and libgl1-mesa-dri (software rendering works)"
                    );
                    tracing::warn!(%reason, "offscreen rendering disabled; physics keeps running");
                    self.unavailable = Some(reason.clone());
                    return Err(TwinError::RenderUnavailable(reason));
                }
            }
        }
        let Some(renderer) = self.renderers.get_mut(&key) else {
            return Err(TwinError::RenderUnavailable("renderer missing".into()));
        };
        renderer.set_camera(MjvCamera::new_fixed(job.camera));
        let fail = |e: mujoco_rs::renderer::RendererError| TwinError::RenderUnavailable(e.to_string());
        renderer.sync_data(&mut self.data).map_err(fail)?;
        renderer.render().map_err(fail)?;
        let rgb = renderer.rgb_flat().map(<[u8]>::to_vec).unwrap_or_default();
        let depth = job
            .depth
            .then(|| renderer.depth_flat().map(<[f32]>::to_vec).unwrap_or_default());
        Ok(Frame {
            width: job.width,
            height: job.height,
            rgb,
            depth,
        })
    }
}
