//! What every service shares: the twin, the lock that serialises driving calls, the settings,
//! and the model's static facts.

mod expiry;
mod hardware;
mod live_view;

use crate::access::audit::{Audit, journal_access_events};
use crate::access::lease::Leases;
use crate::config::Settings;
use crate::wire::units::Units;
use anyhow::{Context, bail};
use expiry::hold_on_expiry;
use fakesim_bridge::hil::{BridgeActuation, HardwareBridge};
use fakesim_episode::journal::Kind;
use fakesim_episode::session::within_limits;
use fakesim_episode::{Engine, EngineConfig};
use fakesim_live_view::LiveView;
use fakesim_safety::SafetyEvent;
use fakesim_twin::{ArmSpec, ModelInfo, Scene, TwinConfig, TwinFault, TwinHandle};
use std::sync::Arc;
use tokio::sync::{Mutex, MutexGuard, broadcast, mpsc};

/// State shared by the session and robot services; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The twin. Reads go straight through it; driving calls hold [`AppState::drive`] first.
    pub twin: TwinHandle,
    /// Held for the whole of every call that changes the robot, so such calls never interleave.
    pub drive: Arc<Mutex<()>>,
    /// The daemon's settings.
    pub settings: Arc<Settings>,
    /// Static facts about the twin's model, read once at start.
    pub model: Arc<ModelInfo>,
    /// The episode engine the session service drives.
    pub engine: Arc<Engine>,
    /// The pairing with the real arm (modes, safety layers); present in sim-only runs too.
    pub bridge: HardwareBridge,
    /// Conversions between LeRobot's joint units and radians (the arm's calibration).
    pub units: Arc<Units>,
    /// The control lease.
    pub leases: Leases,
    /// Where authentication failures and lease changes are recorded.
    pub audit: Audit,
    /// The live view, when `--live-view` asked for one.
    pub live_view: Option<LiveView>,
}

impl AppState {
    /// Loads the twin and checks the settings fit its model (the default image size).
    pub async fn start(settings: Settings) -> anyhow::Result<Self> {
        let config = TwinConfig {
            scene: Scene::builtin(settings.arm, true),
            render_quality: settings.render_quality,
            ..TwinConfig::default()
        };
        let twin = tokio::task::spawn_blocking(move || TwinHandle::spawn(config))
            .await
            .context("the twin loader panicked")?
            .context("cannot start the twin")?;
        tracing::info!(
            mujoco = fakesim_twin::MUJOCO_VERSION,
            linked_from = fakesim_twin::MUJOCO_LIBRARY_DIR,
            "twin loaded"
        );
        let model = twin
            .with_sim(|sim| sim.model_info())
            .await
            .context("the twin stopped while starting")?;
        let (max_width, max_height) = model.max_image;
        if settings.image_size > max_width.min(max_height) {
            bail!(
                "image-size {} exceeds the largest image the twin renders ({max_width}x{max_height})",
                settings.image_size
            );
        }
        let (bridge, events) = hardware::start_bridge(&settings, &twin, &model).await?;
        let calibration = match settings.port {
            Some(_) => Some(hardware::calibration_file(&settings)?),
            None => settings.calibration.clone(),
        };
        let twin_ranges = std::array::from_fn(|i| model.joints[i].range);
        let table = hardware::joint_mapping(&settings)?;
        let units = Arc::new(Units::load(settings.arm, &table, calibration.as_deref(), &twin_ranges)?);
        let engine = Engine::with_actuation(
            twin.clone(),
            EngineConfig {
                max_steps: u64::from(settings.max_steps),
                max_steps_per_call: fakesim_episode::session::MAX_STEPS_PER_CALL,
                runs_dir: settings.runs_dir.clone(),
                image_size: settings.image_size,
                locked_task: settings.lock_task.clone(),
                home_pose: within_limits(settings.arm.spec().home, &bridge.limits()),
            },
            Arc::new(BridgeActuation::new(bridge.clone())),
        );
        let engine = Arc::new(engine);
        let live_view = match &settings.live_view {
            Some(target) => Some(live_view::start(target, &twin, &bridge, &engine, &units).await?),
            None => None,
        };
        tokio::spawn(journal_safety_events(engine.clone(), events, live_view.clone()));
        tokio::spawn(journal_twin_faults(engine.clone(), twin.faults()));
        let (audit, access_events) = Audit::channel();
        tokio::spawn(journal_access_events(engine.clone(), access_events));
        let leases = Leases::start(audit.clone());
        let drive = Arc::new(Mutex::new(()));
        tokio::spawn(hold_on_expiry(leases.expiries(), bridge.clone(), drive.clone()));
        Ok(AppState {
            live_view,
            leases,
            audit,
            engine,
            bridge,
            units,
            twin,
            drive,
            settings: Arc::new(settings),
            model: Arc::new(model),
        })
    }

    /// The arm the daemon runs: the twin's and the real arm's.
    pub fn arm(&self) -> &'static ArmSpec {
        self.settings.arm.spec()
    }

    /// Waits for the drive lock; hold the guard for the whole driving call.
    pub async fn lock_drive(&self) -> MutexGuard<'_, ()> {
        self.drive.lock().await
    }

    /// Physics steps since the model was loaded, derived from the simulation time (so a restored
    /// snapshot restores the count too).
    pub fn physics_steps(&self, time_s: f64) -> u64 {
        // Saturating float-to-int conversion; time is never negative.
        (time_s / self.model.timestep).round() as u64
    }
}

/// Writes every safety event into the live run's journal as it happens, and hands it to the
/// live view.
async fn journal_safety_events(
    engine: Arc<Engine>,
    mut events: mpsc::UnboundedReceiver<SafetyEvent>,
    live_view: Option<LiveView>,
) {
    while let Some(event) = events.recv().await {
        if let Some(live_view) = &live_view {
            live_view.safety_event(&event);
        }
        let fields = serde_json::json!({ "safety": event });
        if let Err(e) = engine.journal_event(Kind::Safety, fields).await {
            tracing::error!(error = %e, "cannot journal a safety event");
        }
    }
}

/// Writes every fault a twin thread caught into the live run's journal (the twin logs it too).
async fn journal_twin_faults(engine: Arc<Engine>, mut faults: broadcast::Receiver<TwinFault>) {
    loop {
        let fields = match faults.recv().await {
            Ok(fault) => serde_json::json!({ "thread": fault.thread, "message": fault.message }),
            Err(broadcast::error::RecvError::Lagged(missed)) => serde_json::json!({ "missed": missed }),
            Err(broadcast::error::RecvError::Closed) => return,
        };
        if let Err(e) = engine.journal_event(Kind::TwinFault, fields).await {
            tracing::error!(error = %e, "cannot journal a twin fault");
        }
    }
}
