//! The renderer's own threads: MuJoCo's GL renderer is not `Send`, so each thread keeps its
//! renderers (GL contexts) and is fed state snapshots.

use crate::backlog::{Admission, Backlog, FrameKey, FrameRoom, RenderCounts};
use crate::cameras::Distortion;
use crate::error::TwinError;
use crate::handle::guarded;
use crate::lifeline::{Ended, Lifeline};
use crate::look::Look;
use crate::look::backdrop::{Backdrop, composite, mask_model, mask_of_rgb};
use crate::quality::RenderQuality;
use crate::sim::RenderSnapshot;
use crate::worker::{Jobs, Worker};
use mujoco_rs::prelude::*;
use mujoco_rs::renderer::MjRenderer;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

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
    /// Each camera's id and the size its frame is drawn at.
    pub cameras: Vec<(usize, (u32, u32))>,
    pub depth: bool,
    /// The look to draw with, and its number (see [`crate::TwinHandle::vary`]).
    pub look: (u64, Arc<Look>),
}

/// One frame for a render thread: the key names it, the snapshot is the state to pose, the
/// look says how it is lit and coloured.
struct RenderJob {
    key: FrameKey,
    snapshot: RenderSnapshot,
    look: Arc<Look>,
}

/// The backdrops of a twin's cameras, by camera id.
pub(crate) type Backdrops = Arc<HashMap<usize, Backdrop>>;

/// Names of the render threads, in order; their count bounds [`RenderQueue::spawn`]'s.
const THREAD_NAMES: [&str; 4] = ["render", "render-2", "render-3", "render-4"];

/// Most render threads a twin runs.
pub const MAX_RENDER_THREADS: usize = THREAD_NAMES.len();

/// Sends frames to the render threads, each with GL contexts of its own; the cameras of one
/// drawing are shared out among them and drawn side by side. Frames wait in a [`Backlog`]:
/// identical ones are drawn once, reads are bounded, abandoned ones dropped.
/// [`RenderQueue::stop`] ends the threads.
pub(crate) struct RenderQueue {
    workers: Vec<Worker<RenderJob>>,
    backlog: Arc<Backlog>,
    /// Which thread the next drawing's first camera goes to, so single cameras share the load.
    next: AtomicUsize,
}

impl RenderQueue {
    /// Starts `threads` render threads (1 to [`MAX_RENDER_THREADS`]) for a model, with the
    /// backdrops of the cameras that have one and bending the frames of the cameras in `lenses`
    /// (by id); each holds a lifeline reporting to `ended`.
    pub fn spawn(
        model: &MjModel,
        backdrops: &Backdrops,
        lenses: Arc<HashMap<usize, Distortion>>,
        threads: usize,
        ended: &Ended,
    ) -> Result<Self, TwinError> {
        let threads = threads.clamp(1, MAX_RENDER_THREADS);
        let queue = RenderQueue {
            workers: Vec::new(),
            backlog: Arc::new(Backlog::new(threads)),
            next: AtomicUsize::new(0),
        };
        THREAD_NAMES.iter().take(threads).try_fold(queue, |mut queue, &name| {
            let model = model.clone();
            let backlog = queue.backlog.clone();
            let backdrops = backdrops.clone();
            let lenses = lenses.clone();
            let body = move |jobs| RenderThread::new(model, backdrops, lenses, backlog).run(jobs);
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

    /// Draws a drawing's frames, in its camera order, let in as `admission` says; each new
    /// frame goes to the next thread in turn.
    pub async fn render(&self, drawing: Drawing, admission: Admission<'_>) -> Result<Vec<Frame>, TwinError> {
        let keys = drawing
            .cameras
            .iter()
            .map(|&(camera, size)| {
                FrameKey::new(
                    &drawing.snapshot,
                    drawing.quality,
                    camera,
                    size,
                    drawing.depth,
                    drawing.look.0,
                )
            })
            .collect();
        let admitted = self.backlog.admit(keys, admission)?;
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let mut new = admitted.new.into_iter().enumerate();
        while let Some((k, key)) = new.next() {
            let job = RenderJob {
                key: key.clone(),
                snapshot: drawing.snapshot.clone(),
                look: drawing.look.1.clone(),
            };
            if let Err(e) = self.workers[(start + k) % self.workers.len()].send(job) {
                for (_, key) in std::iter::once((k, key)).chain(new) {
                    self.backlog.abandon(&key);
                }
                return Err(e);
            }
        }
        let mut frames = Vec::with_capacity(admitted.replies.len());
        for rx in admitted.replies {
            frames.push(rx.await.map_err(|_| TwinError::Stopped)??);
        }
        Ok(frames)
    }

    /// Reserves room for `frames` frames drawn at once (see [`Backlog::reserve`]).
    pub fn reserve(&self, frames: usize) -> Result<FrameRoom, TwinError> {
        self.backlog.reserve(frames)
    }

    /// What the render threads did so far.
    pub fn counts(&self) -> RenderCounts {
        self.backlog.counts()
    }
}

struct RenderThread {
    model: MjModel,
    backdrops: Backdrops,
    backlog: Arc<Backlog>,
    /// The lens distortion of the cameras that have one, by id.
    lenses: Arc<HashMap<usize, Distortion>>,
    /// What each quality level draws from, made on first use and again for a new look.
    scenes: HashMap<RenderQuality, Staged>,
    renderers: HashMap<(RenderQuality, u32, u32), MjRenderer>,
    /// Each backdrop fitted to a frame size, by camera and size.
    fitted: HashMap<(usize, u32, u32), Vec<u8>>,
    unavailable: Option<String>,
}

/// A quality level's data with a look applied: the scene's, and the mask's when a camera has
/// a backdrop.
struct Staged {
    look: u64,
    data: MjData<Arc<MjModel>>,
    mask: Option<MjData<Arc<MjModel>>>,
}

impl Staged {
    /// `model` at `quality` with `look` applied (number `number`).
    fn new(model: &MjModel, quality: RenderQuality, number: u64, look: &Look, backdrops: bool) -> Self {
        let mut drawn = quality.render_model(model);
        look.apply(&mut drawn);
        Staged {
            look: number,
            mask: backdrops.then(|| MjData::new(Arc::new(mask_model(&drawn)))),
            data: MjData::new(Arc::new(drawn)),
        }
    }
}

impl RenderThread {
    fn new(
        model: MjModel,
        backdrops: Backdrops,
        lenses: Arc<HashMap<usize, Distortion>>,
        backlog: Arc<Backlog>,
    ) -> Self {
        RenderThread {
            model,
            backdrops,
            backlog,
            lenses,
            scenes: HashMap::new(),
            renderers: HashMap::new(),
            fitted: HashMap::new(),
            unavailable: None,
        }
    }

    fn run(mut self, jobs: Jobs<RenderJob>) {
        give_way();
        for job in jobs {
            if !self.backlog.claim(&job.key, Instant::now()) {
                continue;
            }
            let started = Instant::now();
            let result = guarded("render", || self.draw(&job)).and_then(|frame| frame);
            if result.as_ref().is_err_and(|e| matches!(e, TwinError::Fault { .. })) {
                // A context a panic interrupted is not trusted again: fresh ones are made.
                self.renderers.clear();
            }
            self.backlog.finish(&job.key, result, started.elapsed());
        }
    }

    fn draw(&mut self, job: &RenderJob) -> Result<Frame, TwinError> {
        if let Some(reason) = &self.unavailable {
            return Err(TwinError::RenderUnavailable(reason.clone()));
        }
        let FrameKey {
            quality,
            camera,
            width,
            height,
            depth,
            look,
            ..
        } = job.key;
        let backdrop = match self.backdrops.get(&camera) {
            Some(backdrop) => Some(fitted(&mut self.fitted, backdrop, (camera, width, height))?),
            None => None,
        };
        let (model, any_backdrop) = (&self.model, !self.backdrops.is_empty());
        let staged = self
            .scenes
            .entry(quality)
            .or_insert_with(|| Staged::new(model, quality, look, &job.look, any_backdrop));
        if staged.look != look {
            *staged = Staged::new(model, quality, look, &job.look, any_backdrop);
        }
        let renderer = renderer(
            &mut self.renderers,
            &mut self.unavailable,
            staged.data.model(),
            (quality, width, height),
        )?;
        renderer.set_camera(MjvCamera::new_fixed(camera));
        // The lens bends what the twin draws, the mask with it; the photo behind is the real
        // camera's own, bent already.
        let lens = self.lenses.get(&camera);
        let bent = |frame: Frame| match lens {
            Some(lens) => lens.apply(frame),
            None => frame,
        };
        let mut frame = bent(draw_view(
            renderer,
            &mut staged.data,
            &job.snapshot,
            (width, height),
            depth,
        )?);
        if let (Some(photo), Some(mask)) = (backdrop, staged.mask.as_mut()) {
            let drawn = bent(draw_view(renderer, mask, &job.snapshot, (width, height), false)?);
            let mask = mask_of_rgb(&drawn.rgb);
            composite(&mut frame.rgb, &mask, photo, job.look.backdrop_brightness);
        }
        Ok(frame)
    }
}

/// Draws `data` posed at `snapshot` with the renderer's camera (of `size`): RGB, and depth
/// when asked.
fn draw_view(
    renderer: &mut MjRenderer,
    data: &mut MjData<Arc<MjModel>>,
    snapshot: &RenderSnapshot,
    (width, height): (u32, u32),
    depth: bool,
) -> Result<Frame, TwinError> {
    // Drawing needs only the poses of bodies, geoms, cameras and lights.
    snapshot.pose(data).map_err(TwinError::RenderUnavailable)?;
    data.camlight();
    if renderer.depth_enabled() != depth {
        renderer.set_depth_rendering(depth);
    }
    let fail = |e: mujoco_rs::renderer::RendererError| TwinError::RenderUnavailable(e.to_string());
    renderer.sync_data(data).map_err(fail)?;
    renderer.render().map_err(fail)?;
    Ok(Frame {
        width,
        height,
        rgb: renderer.rgb_flat().map(<[u8]>::to_vec).unwrap_or_default(),
        depth: renderer.depth_flat().map(<[f32]>::to_vec),
    })
}

/// A backdrop fitted to a frame size, fitted once per camera and size.
fn fitted<'a>(
    cache: &'a mut HashMap<(usize, u32, u32), Vec<u8>>,
    backdrop: &Backdrop,
    key: (usize, u32, u32),
) -> Result<&'a [u8], TwinError> {
    use std::collections::hash_map::Entry;
    match cache.entry(key) {
        Entry::Occupied(entry) => Ok(entry.into_mut()),
        Entry::Vacant(entry) => Ok(entry.insert(backdrop.fitted(key.1, key.2)?)),
    }
}

/// How much lower than the daemon's other threads a render thread runs (nice levels), and with
/// it the GL threads it starts (software GL draws on threads of its own, which inherit it).
const RENDER_NICENESS: i32 = 10;

/// Lowers the calling render thread's scheduling priority by [`RENDER_NICENESS`]: on a machine
/// short of CPU, drawing gives way to the threads that answer calls, so deadlines are kept and
/// refusals sent in time however long drawings take. Nothing changes on an idle machine.
fn give_way() {
    let thread = Some(rustix::thread::gettid());
    let lowered = rustix::process::getpriority_process(thread)
        .and_then(|now| rustix::process::setpriority_process(thread, (now + RENDER_NICENESS).min(19)));
    if let Err(error) = lowered {
        tracing::debug!(%error, "the render thread keeps its priority");
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
