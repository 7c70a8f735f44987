//! The twin's owner thread and the cheap, cloneable async handle callers use.

use crate::error::TwinError;
use crate::quality::RenderQuality;
use crate::render::{Frame, RenderJob, RenderQueue};
use crate::scene::Scene;
use crate::sim::{RenderSnapshot, Sim};
use std::sync::mpsc;
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce(&mut Sim) + Send>;

/// How to start a twin.
#[derive(Debug, Clone)]
pub struct TwinConfig {
    /// Scene to load.
    pub scene: Scene,
    /// Physics steps per control tick.
    pub substeps_per_tick: u32,
    /// Image quality of the cameras.
    pub render_quality: RenderQuality,
}

impl Default for TwinConfig {
    fn default() -> Self {
        TwinConfig {
            scene: Scene::Tabletop,
            substeps_per_tick: crate::sim::DEFAULT_SUBSTEPS_PER_TICK,
            render_quality: RenderQuality::default(),
        }
    }
}

/// A handle on the twin: every call runs on the thread that owns the MuJoCo data, in the order
/// calls arrive. Cloning is cheap; the thread ends when the last handle is dropped.
#[derive(Clone)]
pub struct TwinHandle {
    jobs: mpsc::Sender<Job>,
    renderer: RenderQueue,
}

impl TwinHandle {
    /// Loads the scene on a new thread and starts the render thread beside it.
    pub fn spawn(config: TwinConfig) -> Result<Self, TwinError> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("twin-physics".into())
            .spawn(move || match Sim::load(&config.scene, config.substeps_per_tick) {
                Ok(mut sim) => {
                    let _ = ready_tx.send(Ok(sim.model().clone()));
                    while let Ok(job) = rx.recv() {
                        job(&mut sim);
                    }
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            })
            .map_err(|e| TwinError::Scene(format!("cannot start the physics thread: {e}")))?;
        let model = ready_rx.recv().map_err(|_| TwinError::Stopped)??;
        Ok(TwinHandle {
            jobs,
            renderer: RenderQueue::spawn(&model, config.render_quality)?,
        })
    }

    /// Runs `f` on the physics thread with exclusive access to the twin and returns its result.
    pub async fn with_sim<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Sim) -> R + Send + 'static,
    ) -> Result<R, TwinError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |sim| {
            let _ = tx.send(f(sim));
        });
        self.jobs.send(job).map_err(|_| TwinError::Stopped)?;
        rx.await.map_err(|_| TwinError::Stopped)
    }

    /// Like [`Self::with_sim`] for closures that can themselves fail.
    pub async fn try_with_sim<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Sim) -> Result<R, TwinError> + Send + 'static,
    ) -> Result<R, TwinError> {
        self.with_sim(f).await?
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
        self.try_with_sim(move |sim| {
            let (max_width, max_height) = sim.model_info().max_image;
            if width == 0 || height == 0 || width > max_width || height > max_height {
                return Err(TwinError::ImageSize {
                    width,
                    height,
                    max_width,
                    max_height,
                });
            }
            let cameras = names
                .iter()
                .map(|name| sim.camera_id(name))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(CameraSnapshot {
                snapshot: sim.render_snapshot(),
                cameras,
                width,
                height,
                depth,
            })
        })
        .await
    }

    /// Renders a snapshot's cameras on the render thread; the physics thread is not involved.
    pub async fn draw(&self, shot: CameraSnapshot) -> Result<Vec<Frame>, TwinError> {
        self.renderer
            .render(|reply| RenderJob {
                snapshot: shot.snapshot,
                cameras: shot.cameras,
                width: shot.width,
                height: shot.height,
                depth: shot.depth,
                reply,
            })
            .await
    }
}

/// Cameras to draw and the state to draw them from (see [`TwinHandle::snapshot_cameras`]).
#[derive(Debug, Clone)]
pub struct CameraSnapshot {
    snapshot: RenderSnapshot,
    cameras: Vec<usize>,
    width: u32,
    height: u32,
    depth: bool,
}
