//! The twin's owner thread and the cheap, cloneable async handle callers use.

mod config;
mod snapshot;

pub use config::{DEFAULT_RENDER_THREADS, TwinConfig};
pub use snapshot::CameraSnapshot;

use crate::backlog::{Admission, FrameRoom, RenderCounts};
use crate::cameras::distortions;
use crate::error::TwinError;
use crate::lifeline::{Ended, Lifeline};
use crate::look::Look;
use crate::look::backdrop::Backdrop;
use crate::look::variations::Variations;
use crate::preview::{PreviewQueue, PreviewReport, PreviewRequest};
use crate::quality::RenderQuality;
use crate::render::{Drawing, Frame, RenderQueue};
use crate::sim::Sim;
use crate::worker::{Jobs, Worker};
use fakesim_arm::{ArmSpec, Side};
use mujoco_rs::prelude::MjModel;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use tokio::sync::{broadcast, oneshot, watch};

type Job = Box<dyn FnOnce(&mut Sim) + Send>;

/// A panic caught on one of the twin's threads. The thread keeps serving: the call that panicked
/// is answered with [`TwinError::Fault`] and the fault is logged and broadcast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TwinFault {
    /// `physics`, `render` or `preview`.
    pub thread: &'static str,
    /// The panic's message.
    pub message: String,
}

/// A handle on the twin: every call runs on the thread that owns the MuJoCo data, in the order
/// calls arrive. Cloning is cheap; [`TwinHandle::shutdown`], or dropping the last handle, frees
/// the twin on its own threads and joins them.
#[derive(Clone)]
pub struct TwinHandle {
    inner: Arc<Inner>,
    /// The arm this handle's calls act on: an index into the scene's arms (see [`Sim::focus`]).
    focus: usize,
}

struct Inner {
    /// The scene's arms, left first in a pair.
    arms: Vec<&'static ArmSpec>,
    physics: Worker<Job>,
    renderer: RenderQueue,
    /// The quality a snapshot is drawn at unless it asks for another.
    render_quality: RenderQuality,
    previewer: PreviewQueue,
    faults: broadcast::Sender<TwinFault>,
    ended: Ended,
    /// The model the cameras draw (part colours painted), which looks are drawn for.
    drawn: MjModel,
    variations: Variations,
    /// The look frames are drawn with now, and its number (0: the default look).
    look: Mutex<(u64, Arc<Look>)>,
}

impl TwinHandle {
    /// Loads the scene on a new thread and starts the render and preview threads beside it.
    pub fn spawn(mut config: TwinConfig) -> Result<Self, TwinError> {
        let (ready_tx, ready_rx) = mpsc::channel();
        let arms = config.scene.arms();
        let render_quality = config.render_quality;
        let render_threads = config.render_threads;
        let profiles = config.camera_profiles();
        let part_colors = config.part_colors;
        let backdrops = std::mem::take(&mut config.backdrops);
        let variations = std::mem::take(&mut config.variations);
        let ended: Ended = Arc::new(watch::channel(None).0);
        let physics = Worker::spawn(
            "physics",
            Lifeline::new("physics", &ended),
            move |jobs: Jobs<Job>| match config.load() {
                Ok(mut sim) => {
                    let _ = ready_tx.send(Ok(sim.model().clone()));
                    for job in jobs {
                        job(&mut sim);
                    }
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            },
        )
        .map_err(|e| TwinError::Scene(format!("cannot start the physics thread: {e}")))?;
        let abandon = |physics: Worker<Job>, error: TwinError| {
            physics.stop();
            Err(error)
        };
        let model = match ready_rx.recv() {
            Ok(Ok(model)) => model,
            Ok(Err(e)) => return abandon(physics, e),
            Err(_) => return abandon(physics, TwinError::Stopped),
        };
        let mut drawn = MjModel::clone(&model);
        part_colors.paint(&mut drawn);
        let backdrops = match camera_backdrops(&drawn, backdrops) {
            Ok(backdrops) => Arc::new(backdrops),
            Err(e) => return abandon(physics, e),
        };
        let lenses = distortions(&model, &profiles);
        let renderer = match RenderQueue::spawn(&drawn, &backdrops, lenses, render_threads, &ended) {
            Ok(renderer) => renderer,
            Err(e) => return abandon(physics, e),
        };
        let previewer = match PreviewQueue::spawn(&model, &arms, Lifeline::new("preview", &ended)) {
            Ok(previewer) => previewer,
            Err(e) => {
                renderer.stop();
                return abandon(physics, e);
            }
        };
        Ok(TwinHandle {
            focus: 0,
            inner: Arc::new(Inner {
                arms,
                physics,
                renderer,
                render_quality,
                previewer,
                faults: broadcast::channel(FAULTS_KEPT).0,
                ended,
                drawn,
                variations,
                look: Mutex::new((0, Arc::new(Look::default()))),
            }),
        })
    }

    /// The arm this handle's calls act on: the scene's only arm, or one side of a pair.
    pub fn arm(&self) -> &'static ArmSpec {
        self.inner.arms[self.focus]
    }

    /// Every arm in the twin's scene, left first in a pair.
    pub fn arms(&self) -> &[&'static ArmSpec] {
        &self.inner.arms
    }

    /// A handle on the same twin whose per-arm calls act on `side` of the pair; `None` when
    /// the scene holds no such side.
    pub fn on(&self, side: Side) -> Option<TwinHandle> {
        let focus = self.inner.arms.iter().position(|arm| arm.side == Some(side))?;
        Some(TwinHandle {
            inner: self.inner.clone(),
            focus,
        })
    }

    /// Every fault caught from now on.
    pub fn faults(&self) -> broadcast::Receiver<TwinFault> {
        self.inner.faults.subscribe()
    }

    /// Waits until one of the twin's threads has ended (after [`Self::shutdown`], or because
    /// it died) and names it: `physics`, `render` or `preview`.
    pub async fn thread_ended(&self) -> &'static str {
        let mut ended = self.inner.ended.subscribe();
        match ended.wait_for(Option::is_some).await {
            Ok(thread) => thread.unwrap_or("twin"),
            // Unreachable while this handle holds the sender; a name all the same.
            Err(_) => "twin",
        }
    }

    /// Frees the previewer, the renderer and then the physics on their own threads and waits
    /// for the three threads to end; later calls answer [`TwinError::Stopped`]. Blocks for as long as the jobs already
    /// queued take.
    pub fn shutdown(&self) {
        self.inner.stop();
    }

    /// Runs `f` on the physics thread with exclusive access to the twin and returns its result.
    pub async fn with_sim<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Sim) -> R + Send + 'static,
    ) -> Result<R, TwinError> {
        let (tx, rx) = oneshot::channel();
        let focus = self.focus;
        let job: Job = Box::new(move |sim| {
            // The focus was found among the scene's arms, which the twin holds in the same order.
            if let Err(e) = sim.focus(focus) {
                let _ = tx.send(Err(e));
                return;
            }
            let _ = tx.send(guarded("physics", || f(sim)));
        });
        self.inner.physics.send(job)?;
        rx.await.map_err(|_| TwinError::Stopped)?.map_err(|e| self.report(e))
    }

    /// Like [`Self::with_sim`] for closures that can themselves fail.
    pub async fn try_with_sim<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Sim) -> Result<R, TwinError> + Send + 'static,
    ) -> Result<R, TwinError> {
        self.with_sim(f).await?
    }

    /// Previews a chunk of servo targets from the twin's state now (see [`Sim::preview`]): the
    /// physics thread checks the request and copies the state, the preview thread runs it.
    pub async fn preview(&self, request: PreviewRequest) -> Result<PreviewReport, TwinError> {
        let job = self.try_with_sim(move |sim| sim.preview_job(&request)).await?;
        self.inner.previewer.run(job).await.map_err(|e| self.report(e))
    }

    /// Renders a camera's RGB (and depth, when asked) at a size, from the state right now.
    pub async fn render(&self, camera: &str, width: u32, height: u32, depth: bool) -> Result<Frame, TwinError> {
        let mut frames = self.render_cameras(&[camera], width, height, depth).await?;
        frames.pop().ok_or(TwinError::Stopped)
    }

    /// Renders several cameras, in the order given, from one snapshot of the state right now.
    pub async fn render_cameras(
        &self,
        cameras: &[&str],
        width: u32,
        height: u32,
        depth: bool,
    ) -> Result<Vec<Frame>, TwinError> {
        let shot = self.snapshot_cameras(cameras, width, height, depth).await?;
        self.draw(shot).await
    }

    /// Checks a camera request and takes the state to draw it from, in one short physics job;
    /// [`Self::draw`] renders it later, so a caller can let go of its locks in between.
    pub async fn snapshot_cameras(
        &self,
        cameras: &[&str],
        width: u32,
        height: u32,
        depth: bool,
    ) -> Result<CameraSnapshot, TwinError> {
        let names: Vec<String> = cameras.iter().map(|c| (*c).to_owned()).collect();
        self.try_with_sim(move |sim| CameraSnapshot::take(sim, &names, width, height, depth))
            .await
    }

    /// Renders a snapshot's cameras on the render thread as a read without a deadline (refused
    /// with [`TwinError::RenderBusy`] when the backlog is full); the physics thread is not
    /// involved.
    pub async fn draw(&self, shot: CameraSnapshot) -> Result<Vec<Frame>, TwinError> {
        self.draw_as(shot, Admission::Read { deadline: None }).await
    }

    /// Reserves room in the render backlog for `frames` frames drawn at once, before the
    /// action whose images they are runs; refused at once ([`TwinError::RenderBusy`], with a
    /// retry hint) when there is not that much room.
    pub fn reserve_frames(&self, frames: usize) -> Result<FrameRoom, TwinError> {
        self.inner.renderer.reserve(frames)
    }

    /// Renders a snapshot's cameras let in as `admission` says: a read may be refused
    /// ([`TwinError::RenderBusy`]) or dropped at its deadline ([`TwinError::DeadlinePassed`]).
    pub async fn draw_as(&self, shot: CameraSnapshot, admission: Admission<'_>) -> Result<Vec<Frame>, TwinError> {
        let look = self.inner.look.lock().unwrap_or_else(PoisonError::into_inner).clone();
        self.inner
            .renderer
            .render(
                Drawing {
                    snapshot: shot.snapshot,
                    quality: shot.quality.unwrap_or(self.inner.render_quality),
                    cameras: shot.cameras,
                    depth: shot.depth,
                    look,
                },
                admission,
            )
            .await
            .map_err(|e| self.report(e))
    }

    /// Draws the look of an episode from its `seed` within the twin's variations and draws
    /// every later frame with it; `None` when nothing varies (the look stays the default).
    pub fn vary(&self, seed: u64) -> Option<Look> {
        let variations = &self.inner.variations;
        if variations.is_off() {
            return None;
        }
        let look = variations.draw(seed, &self.inner.drawn);
        let mut now = self.inner.look.lock().unwrap_or_else(PoisonError::into_inner);
        *now = (now.0 + 1, Arc::new(look.clone()));
        Some(look)
    }

    /// What the render threads did with the frames asked of them since the twin started.
    pub fn render_counts(&self) -> RenderCounts {
        self.inner.renderer.counts()
    }

    /// Logs and broadcasts a caught fault; passes any error through.
    fn report(&self, error: TwinError) -> TwinError {
        if let TwinError::Fault { thread, message } = &error {
            tracing::error!(thread, %message, "a twin thread panicked; the call failed, the thread keeps serving");
            // Nobody listening is fine: the log line stays.
            let _ = self.inner.faults.send(TwinFault {
                thread,
                message: message.clone(),
            });
        }
        error
    }
}

impl Inner {
    /// Ends the preview and render threads, then the physics thread, joining each
    /// (idempotent; a handle dropped on a twin thread itself does not wait for that thread).
    fn stop(&self) {
        self.previewer.stop();
        self.renderer.stop();
        self.physics.stop();
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The backdrops by the id of the camera each names; a name the model has no camera of is
/// refused with the cameras it has.
fn camera_backdrops(model: &MjModel, backdrops: Vec<Backdrop>) -> Result<HashMap<usize, Backdrop>, TwinError> {
    use mujoco_rs::prelude::MjtObjBase;
    backdrops
        .into_iter()
        .map(
            |backdrop| match model.name_to_id(MjtObjBase::mjOBJ_CAMERA, &backdrop.camera) {
                Some(id) => Ok((id, backdrop)),
                None => {
                    let known: Vec<&str> = (0..model.cam_pos().len())
                        .filter_map(|id| model.id_to_name(MjtObjBase::mjOBJ_CAMERA, id))
                        .collect();
                    Err(TwinError::Backdrop(format!(
                        "a backdrop names camera {:?}, which the scene does not have; its cameras: {}",
                        backdrop.camera,
                        known.join(", ")
                    )))
                }
            },
        )
        .collect()
}

/// Faults kept for a slow subscriber before the oldest are dropped.
const FAULTS_KEPT: usize = 16;

/// Runs a job of a twin thread, turning a panic into [`TwinError::Fault`] so the thread lives on.
pub(crate) fn guarded<R>(thread: &'static str, f: impl FnOnce() -> R) -> Result<R, TwinError> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned());
        TwinError::Fault { thread, message }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_fault_naming_the_thread_and_the_message() {
        let joint = 7;
        let fault = guarded("render", || -> u8 { panic!("joint {joint} exploded") });
        assert_eq!(
            fault,
            Err(TwinError::Fault {
                thread: "render",
                message: "joint 7 exploded".into()
            })
        );
        assert_eq!(guarded("physics", || 3), Ok(3));
    }
}
