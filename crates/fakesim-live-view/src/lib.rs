//! The live view of fakesim-hil: the twin, the measured real arm and the shadow's prediction in
//! 3D beside their joint series, the task objects, the TCP's path and the current `Move` target,
//! the camera frames the daemon draws anyway, and its safety events, stop reasons and mode
//! changes, logged to Rerun (<https://rerun.io>) as they happen.
//!
//! Nothing is logged on the physics thread or on a driving call's path: the twin hands a copy of
//! its positions after every physics advance, the bridge its readings, the engine its journal,
//! and each goes into one bounded queue that drops an update rather than wait when full. One
//! thread of its own (`live-view`) takes them from there, poses the model on a private copy of
//! the MuJoCo data, and logs.
//!
//! The Rerun SDK is behind the `rerun` feature; without it only [`Target`] is built and
//! [`LiveView::start`] refuses, naming the feature.

mod target;

#[cfg(feature = "rerun")]
mod feed;
#[cfg(feature = "rerun")]
mod logger;
#[cfg(feature = "rerun")]
mod paths;
#[cfg(feature = "rerun")]
mod sources;

pub use target::{DEFAULT_GRPC_PORT, DEFAULT_WEB_PORT, Target, TargetError};

use fakesim_bridge::hil::HardwareBridge;
use fakesim_episode::tap::TapEntry;
use fakesim_safety::SafetyEvent;
use fakesim_twin::TwinHandle;
use fakesim_twin::arms::Side;
use std::sync::Arc;
use tokio::sync::broadcast;

/// The version of the Rerun SDK the live view logs with; a viewer reads its own minor version
/// and the one before, so use a 0.33 (or 0.34) viewer, as LeRobot 0.6.1's `rerun-sdk<0.34` pin gives.
pub const RERUN_VERSION: &str = "0.33.1";

/// Converts the arm's joints (rad, action-key order) into LeRobot's units (degrees about the
/// middle of the calibrated range, the gripper 0..100), for `observation.<joint>.pos` and
/// `action.<joint>.pos`.
pub type ToLeRobot = Arc<dyn Fn(&[f64; 6]) -> [f64; 6] + Send + Sync>;

/// What the live view reads from.
pub struct Sources {
    /// The twin: its model once, and a snapshot after every physics advance.
    pub twin: TwinHandle,
    /// Each of the twin's arms, in [`TwinHandle::arms`]'s order (a pair's left first).
    pub arms: Vec<ArmSource>,
    /// The engine's journal tap (`Engine::tap().subscribe()`): lines, frames, move targets.
    pub journal: broadcast::Receiver<TapEntry>,
}

/// What the live view reads of one arm.
pub struct ArmSource {
    /// Its pairing with the real arm: the readings (with the shadow's prediction) and modes.
    pub bridge: HardwareBridge,
    /// Its conversion into LeRobot's units.
    pub to_lerobot: ToLeRobot,
}

/// The live view could not start.
#[derive(Debug, thiserror::Error)]
pub enum LiveViewError {
    /// This build has no Rerun SDK.
    #[error("this fakesim-hil was built without the live view; rebuild with `--features live-view`")]
    NotBuilt,
    /// Rerun refused the target (the file cannot be created, the viewer cannot be started...).
    #[error("live view {target}: {message}")]
    Rerun {
        /// The target.
        target: String,
        /// Rerun's reason.
        message: String,
    },
    /// The twin stopped before the live view could read its model.
    #[error("live view: the twin is not running: {0}")]
    Twin(#[from] fakesim_twin::TwinError),
    /// The logger thread could not be started.
    #[error("live view: cannot start its thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// A running live view; cheap to clone. [`LiveView::stop`] flushes it (a saved file is complete
/// after it).
#[derive(Clone)]
pub struct LiveView {
    #[cfg(feature = "rerun")]
    running: Arc<sources::Running>,
}

impl LiveView {
    /// Starts logging to `target` from `sources`.
    pub async fn start(target: &Target, sources: Sources) -> Result<Self, LiveViewError> {
        #[cfg(feature = "rerun")]
        {
            let running = sources::Running::start(target, sources).await?;
            Ok(LiveView {
                running: Arc::new(running),
            })
        }
        #[cfg(not(feature = "rerun"))]
        {
            let _ = (target, sources);
            Err(LiveViewError::NotBuilt)
        }
    }

    /// Logs a safety event of arm `arm` of a pair, or of the arm alone (a bridge hands those
    /// to one receiver, the daemon's journal forwarder, which passes each on here).
    pub fn safety_event(&self, arm: Option<Side>, event: &SafetyEvent) {
        #[cfg(feature = "rerun")]
        self.running.safety_event(arm, event);
        #[cfg(not(feature = "rerun"))]
        let _ = (arm, event);
    }

    /// Updates dropped so far because the logger fell behind.
    pub fn dropped(&self) -> u64 {
        #[cfg(feature = "rerun")]
        return self.running.dropped();
        #[cfg(not(feature = "rerun"))]
        0
    }

    /// Stops reading the sources, logs what is queued, flushes the recording and ends the
    /// logger thread (idempotent).
    pub async fn stop(&self) {
        #[cfg(feature = "rerun")]
        self.running.stop().await;
    }
}
