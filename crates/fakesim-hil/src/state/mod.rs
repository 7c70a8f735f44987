//! What every service shares: the twin, the lock that serialises driving calls, the settings,
//! and the model's static facts.

mod dynamics;
mod expiry;
mod hardware;
mod live_view;

use crate::access::audit::{Audit, journal_access_events};
use crate::access::lease::Leases;
use crate::config::Settings;
use crate::wire::units::Units;
use anyhow::{Context, bail};
pub use dynamics::LoadedProfile;
use expiry::hold_on_expiry;
use fakesim_arm::Side;
use fakesim_bridge::hil::{BridgeActuation, HardwareBridge, ShadowModel};
use fakesim_episode::journal::Kind;
use fakesim_episode::session::within_limits;
use fakesim_episode::{ArmActuation, Engine, EngineConfig};
use fakesim_feetech_arm::mapping::JointMapping;
use fakesim_live_view::LiveView;
use fakesim_safety::SafetyEvent;
use fakesim_twin::{ArmSpec, ModelInfo, TwinConfig, TwinFault, TwinHandle};
use hardware::Follower;
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
    /// Every arm the daemon drives: the one arm (whose twin, model, bridge and units are the
    /// fields above), or a pair's left and right.
    pub arms: Arc<[ArmUnit]>,
}

/// One arm the daemon drives: the twin's handle on it, its model facts, its bridge (its own
/// safety pipeline and emergency stop) and its units (its own calibration).
#[derive(Clone)]
pub struct ArmUnit {
    /// Its side of a pair; `None` for an arm alone.
    pub side: Option<Side>,
    /// The twin, its per-arm calls acting on this arm.
    pub twin: TwinHandle,
    /// This arm's joints and the twin's static facts.
    pub model: Arc<ModelInfo>,
    /// The pairing of this arm with its twin.
    pub bridge: HardwareBridge,
    /// Conversions between LeRobot's units and radians through this arm's calibration.
    pub units: Arc<Units>,
    /// The dynamics profile in force on this arm, if any (else the model's own dynamics).
    pub dynamics: Option<Arc<LoadedProfile>>,
}

impl AppState {
    /// Loads the twin and checks the settings fit its model (the default image size).
    pub async fn start(settings: Settings) -> anyhow::Result<Self> {
        let followers = Follower::all(&settings);
        let profiles = (followers.iter())
            .map(|follower| dynamics::profile_of(&settings, follower).map(|p| p.map(Arc::new)))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let scene = hardware::scene(&settings);
        let physics_step_s = {
            let (scene, profiles) = (scene.clone(), profiles.clone());
            tokio::task::spawn_blocking(move || dynamics::twin_physics_step(&scene, &profiles))
                .await
                .context("the profiles' physics step check panicked")??
        };
        let backdrops = settings.backdrops.clone();
        let backdrops = tokio::task::spawn_blocking(move || {
            (backdrops.iter())
                .map(|b| fakesim_twin::Backdrop::open(&b.camera, &b.file))
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .context("the backdrop loader panicked")??;
        let config = TwinConfig {
            scene,
            render_quality: settings.render_quality,
            part_colors: settings.part_colors,
            backdrops,
            variations: settings.variations.clone(),
            cameras: settings.cameras.clone(),
            boards: settings.boards.clone(),
            dynamics: profiles.iter().map(|p| p.as_ref().map(|p| p.dynamics)).collect(),
            physics_step_s,
            ..TwinConfig::default()
        };
        let twin = tokio::task::spawn_blocking(move || TwinHandle::spawn(config))
            .await
            .context("the twin loader panicked")?
            .context("cannot start the twin")?;
        tracing::info!(
            mujoco = fakesim_twin::MUJOCO_VERSION,
            linked_from = fakesim_twin::MUJOCO_LIBRARY_DIR,
            arms = twin.arms().len(),
            physics_step_s,
            "twin loaded"
        );
        let table = hardware::joint_mapping(&settings)?;
        let mut arms = Vec::new();
        let mut safety_events = Vec::new();
        for (follower, profile) in followers.into_iter().zip(profiles) {
            let (arm, events) = start_arm(&settings, &table, &twin, follower, profile).await?;
            arms.push(arm);
            safety_events.push(events);
        }
        let Some(first) = arms.first().cloned() else {
            bail!("the daemon drives no arm");
        };
        let (max_width, max_height) = first.model.max_image;
        if settings.image_size > max_width.min(max_height) {
            bail!(
                "image-size {} exceeds the largest image the twin renders ({max_width}x{max_height})",
                settings.image_size
            );
        }
        let ArmUnit {
            bridge, units, model, ..
        } = first;
        let actuations = (arms.iter())
            .map(|arm| ArmActuation {
                twin: arm.twin.clone(),
                actuation: Arc::new(BridgeActuation::new(arm.bridge.clone())),
            })
            .collect();
        let engine = Engine::with_arms(
            twin.clone(),
            EngineConfig {
                max_steps: u64::from(settings.max_steps),
                max_steps_per_call: fakesim_episode::session::MAX_STEPS_PER_CALL,
                runs_dir: settings.runs_dir.clone(),
                image_size: settings.image_size,
                locked_task: settings.lock_task.clone(),
                home_pose: within_limits(settings.arm.spec().home, &bridge.limits()),
            },
            actuations,
        );
        let engine = Arc::new(engine);
        let live_view = match &settings.live_view {
            Some(target) => Some(live_view::start(target, &twin, &arms, &engine).await?),
            None => None,
        };
        for (arm, events) in arms.iter().zip(safety_events) {
            tokio::spawn(journal_safety_events(
                engine.clone(),
                arm.side,
                events,
                live_view.clone(),
            ));
        }
        tokio::spawn(journal_twin_faults(engine.clone(), twin.faults()));
        let (audit, access_events) = Audit::channel();
        tokio::spawn(journal_access_events(engine.clone(), access_events));
        let leases = Leases::start(audit.clone(), arms.len());
        let drive = Arc::new(Mutex::new(()));
        for (index, arm) in arms.iter().enumerate() {
            tokio::spawn(hold_on_expiry(
                leases.expiries_of(index),
                arm.bridge.clone(),
                drive.clone(),
            ));
        }
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
            model,
            arms: arms.into(),
        })
    }

    /// The model names of joints given by label (`shoulder_pan`, `left/shoulder_pan`), each
    /// found on the arm whose label it is: `1`, `left/1`.
    pub fn joint_ids_of(&self, labels: &[String]) -> Vec<String> {
        labels
            .iter()
            .filter_map(|label| {
                self.arms.iter().find_map(|arm| {
                    let spec = arm.twin.arm();
                    spec.resolve_joint(label).map(|joint| spec.model_name(joint))
                })
            })
            .collect()
    }

    /// Whether the daemon drives a pair of arms.
    pub fn is_pair(&self) -> bool {
        self.arms.len() > 1
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

/// Starts one follower: the twin's handle on its arm, its bridge and its units.
async fn start_arm(
    settings: &Settings,
    table: &JointMapping,
    twin: &TwinHandle,
    follower: Follower,
    dynamics: Option<Arc<LoadedProfile>>,
) -> anyhow::Result<(ArmUnit, mpsc::UnboundedReceiver<SafetyEvent>)> {
    let arm_twin = match follower.side {
        Some(side) => twin.on(side).with_context(|| format!("the twin holds no {side} arm"))?,
        None => twin.clone(),
    };
    let model = arm_twin
        .with_sim(|sim| sim.model_info())
        .await
        .context("the twin stopped while starting")?;
    let shadow_model = match &dynamics {
        Some(profile) => {
            let (arm, identified, step) = (settings.arm, profile.dynamics, profile.physics_step_s);
            let compiled = tokio::task::spawn_blocking(move || ShadowModel::new(arm, &identified, step))
                .await
                .context("the shadow's model loader panicked")?;
            Some(compiled.context("cannot load the shadow's identified model")?)
        }
        None => None,
    };
    let (bridge, events) = hardware::start_bridge(settings, &follower, &arm_twin, &model, shadow_model).await?;
    let calibration = match follower.port {
        Some(_) => Some(hardware::calibration_file(&follower)?),
        None => follower.calibration.clone(),
    };
    let units = Units::load(arm_twin.arm(), table, calibration.as_deref(), &model.joints)?;
    let arm = ArmUnit {
        side: follower.side,
        twin: arm_twin,
        model: Arc::new(model),
        bridge,
        units: Arc::new(units),
        dynamics,
    };
    Ok((arm, events))
}

/// Writes every safety event of one arm (`side` of a pair) into the live run's journal as it
/// happens, and hands it to the live view.
async fn journal_safety_events(
    engine: Arc<Engine>,
    side: Option<Side>,
    mut events: mpsc::UnboundedReceiver<SafetyEvent>,
    live_view: Option<LiveView>,
) {
    while let Some(event) = events.recv().await {
        if let Some(live_view) = &live_view {
            live_view.safety_event(side, &event);
        }
        let fields = match side {
            Some(side) => serde_json::json!({ "safety": event, "arm": side.name() }),
            None => serde_json::json!({ "safety": event }),
        };
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
