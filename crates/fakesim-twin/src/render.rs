//! The renderer's own threads: MuJoCo's GL renderer is not `Send`, so each thread keeps its
//! renderers (GL contexts) and is fed state snapshots.

use crate::error::TwinError;
use crate::handle::guarded;
use crate::lifeline::{Ended, Lifeline};
use crate::quality::RenderQuality;
use crate::sim::RenderSnapshot;
use crate::worker::{Jobs, Worker};
use mujoco_rs::prelude::*;
use mujoco_rs::renderer::MjRenderer;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
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
#[derive(Debug, Clone)]
pub(crate) struct Drawing {
    pub snapshot: RenderSnapshot,
    pub quality: RenderQuality,
    pub cameras: Vec<usize>,
    pub width: u32,
    pub height: u32,
    pub depth: bool,
}

/// A drawing for one render thread, and where its frames go.
struct RenderJob {
    drawing: Drawing,
    reply: oneshot::Sender<Result<Vec<Frame>, TwinError>>,
}

/// Names of the render threads, in order; their count bounds [`RenderQueue::spawn`]'s.
const THREAD_NAMES: [&str; 4] = ["render", "render-2", "render-3", "render-4"];

/// Most render threads a twin runs.
pub const MAX_RENDER_THREADS: usize = THREAD_NAMES.len();

/// Sends drawings to the render threads, each with GL contexts of its own; the cameras of one
/// drawing are shared out among them and drawn side by side. [`RenderQueue::stop`] ends them.
pub(crate) struct RenderQueue {
    workers: Vec<Worker<RenderJob>>,
    /// Which thread the next drawing's first camera goes to, so single cameras share the load.
    next: AtomicUsize,
}

impl RenderQueue {
    /// Starts `threads` render threads (1 to [`MAX_RENDER_THREADS`]) for a model; each holds
    /// a lifeline reporting to `ended`.
    pub fn spawn(model: &MjModel, threads: usize, ended: &Ended) -> Result<Self, TwinError> {
        let queue = RenderQueue {
            workers: Vec::new(),
            next: AtomicUsize::new(0),
        };
        THREAD_NAMES
            .iter()
            .take(threads.clamp(1, MAX_RENDER_THREADS))
            .try_fold(queue, |mut queue, &name| {
                let model = model.clone();
                let body = move |jobs| RenderThread::new(model).run(jobs);
                match Worker::spawn(name, Lifeline::new(name, ended), body) {
                    Ok(worker) => {
                        queue.workers.push(worker);
                        Ok(queue)
                    }
                    Err(e) => {
                        queue.stop();
                        Err(TwinError::RenderUnavailable(format!(
                            "cannot start a render thread: {e}"
                        )))
                    }
                }
            })
    }

    /// Ends the render threads after the jobs already queued and waits for them (idempotent).
    pub fn stop(&self) {
        for worker in &self.workers {
            worker.stop();
        }
    }

    /// Draws a drawing's frames, in its camera order: camera k on thread (start + k) mod n.
    pub async fn render(&self, drawing: Drawing) -> Result<Vec<Frame>, TwinError> {
        let threads = self.workers.len().min(drawing.cameras.len()).max(1);
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let mut replies = Vec::with_capacity(threads);
        for part in 0..threads {
            let cameras = drawing.cameras.iter().skip(part).step_by(threads).copied().collect();
            let (reply, rx) = oneshot::channel();
            let job = RenderJob {
                drawing: Drawing {
                    cameras,
                    ..drawing.clone()
                },
                reply,
            };
            self.workers[(start + part) % self.workers.len()].send(job)?;
            replies.push(rx);
        }
        let mut parts = Vec::with_capacity(threads);
        for rx in replies {
            parts.push(rx.await.map_err(|_| TwinError::Stopped)??.into_iter());
        }
        let mut frames = Vec::with_capacity(drawing.cameras.len());
        for k in 0..drawing.cameras.len() {
            frames.extend(parts[k % threads].next());
        }
        Ok(frames)
    }
}

struct RenderThread {
    model: MjModel,
    /// The data each quality level draws from, made on first use.
    scenes: HashMap<RenderQuality, MjData<Arc<MjModel>>>,
    renderers: HashMap<(RenderQuality, u32, u32), MjRenderer>,
    unavailable: Option<String>,
}

impl RenderThread {
    fn new(model: MjModel) -> Self {
        RenderThread {
            model,
            scenes: HashMap::new(),
            renderers: HashMap::new(),
            unavailable: None,
        }
    }

    fn run(mut self, jobs: Jobs<RenderJob>) {
        for job in jobs {
            let result = guarded("render", || self.draw(&job.drawing)).and_then(|frames| frames);
            if result.as_ref().is_err_and(|e| matches!(e, TwinError::Fault { .. })) {
                // A context a panic interrupted is not trusted again: fresh ones are made.
                self.renderers.clear();
            }
            // The caller may have given up waiting; nothing to do then.
            let _ = job.reply.send(result);
        }
    }

    fn draw(&mut self, job: &Drawing) -> Result<Vec<Frame>, TwinError> {
        if let Some(reason) = &self.unavailable {
            return Err(TwinError::RenderUnavailable(reason.clone()));
        }
        let model = &self.model;
        let data = self
            .scenes
            .entry(job.quality)
            .or_insert_with(|| MjData::new(Arc::new(job.quality.render_model(model))));
        // Drawing needs only the poses of bodies, geoms, cameras and lights.
        job.snapshot.pose(data).map_err(TwinError::RenderUnavailable)?;
        data.camlight();
        let renderer = renderer(
            &mut self.renderers,
            &mut self.unavailable,
            data.model(),
            (job.quality, job.width, job.height),
        )?;
        if renderer.depth_enabled() != job.depth {
            renderer.set_depth_rendering(job.depth);
        }
        let fail = |e: mujoco_rs::renderer::RendererError| TwinError::RenderUnavailable(e.to_string());
        let mut frames = Vec::with_capacity(job.cameras.len());
        for &camera in &job.cameras {
            renderer.set_camera(MjvCamera::new_fixed(camera));
            renderer.sync_data(data).map_err(fail)?;
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

/// The renderer of one quality level and image size, made on first use; one GL context serves
/// every camera. A failure to make one marks rendering unavailable for good.
fn renderer<'a>(
    renderers: &'a mut HashMap<(RenderQuality, u32, u32), MjRenderer>,
    unavailable: &mut Option<String>,
    model: &MjModel,
    key: (RenderQuality, u32, u32),
) -> Result<&'a mut MjRenderer, TwinError> {
    use std::collections::hash_map::Entry;
    let (_, width, height) = key;
    match renderers.entry(key) {
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
