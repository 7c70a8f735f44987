//! Pairs the twin with the real arm named by `--port` (or with nothing, sim-only): loads the
//! calibration, checks the joint mapping against the twin, opens the arm and starts the bridge.

mod trace;

use crate::config::Settings;
use anyhow::{Context, anyhow, bail};
use fakesim_arm::BoxFuture;
use fakesim_arm::{Arm, Side};
use fakesim_bridge::hil::{BridgeConfig, BridgeParts, HardwareBridge, ShadowModel};
use fakesim_bridge::twin::{ScratchTwinKinematics, TwinPreviewGate};
use fakesim_feetech_arm::mapping::{CalibratedMapping, JointMapping};
use fakesim_feetech_arm::{FeetechArm, FeetechArmConfig, Reconnect, Reconnection};
use fakesim_safety::{CommandPreview, RangeGuard, SafetyEvent, TableGuard};
use fakesim_twin::values::Bounds;
use fakesim_twin::{ModelInfo, Scene, TwinHandle};
use feetech::bus::{Bus, BusConfig};
use feetech::calibration::{self, ArmRole, Calibration, SO101_MOTORS, calibration_root, find_calibration};
use feetech::configure::configure;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_serial::SerialStream;

/// One follower the daemon drives: the arm alone, or one side of a pair.
#[derive(Debug, Clone)]
pub struct Follower {
    /// Its side of a pair; `None` for an arm alone.
    pub side: Option<Side>,
    /// Its serial device; `None`: the twin's arm runs alone.
    pub port: Option<PathBuf>,
    /// Its calibration file, when named directly.
    pub calibration: Option<PathBuf>,
    /// Its id in LeRobot's calibration directory: `--robot-id`, with `_left` or `_right` on a
    /// pair's side.
    pub robot_id: Option<String>,
    /// Its dynamics profile, when named directly.
    pub dynamics: Option<PathBuf>,
}

impl Follower {
    /// The followers of the settings: the one arm, or the left and the right of a pair.
    pub fn all(settings: &Settings) -> Vec<Follower> {
        if !settings.pair {
            return vec![Follower {
                side: None,
                port: settings.port.clone(),
                calibration: settings.calibration.clone(),
                robot_id: settings.robot_id.clone(),
                dynamics: settings.dynamics.clone(),
            }];
        }
        Side::BOTH
            .into_iter()
            .map(|side| Follower {
                side: Some(side),
                port: settings.pair_ports[side.index()].clone(),
                calibration: settings.pair_calibrations[side.index()].clone(),
                robot_id: settings.robot_id.as_ref().map(|id| format!("{id}_{side}")),
                dynamics: settings.pair_dynamics[side.index()].clone(),
            })
            .collect()
    }

    /// How messages name its port flag: `--port`, `--left-port`.
    fn port_flag(&self) -> String {
        match self.side {
            Some(side) => format!("--{side}-port"),
            None => "--port".to_owned(),
        }
    }
}

/// The scene the twin of `settings` loads: the arm, or a pair of it, with the task objects.
pub fn scene(settings: &Settings) -> Scene {
    if settings.pair {
        Scene::Pair {
            arm: settings.arm,
            objects: true,
        }
    } else {
        Scene::builtin(settings.arm, true)
    }
}

/// The calibration file of `follower`: named directly, else its robot id in LeRobot's directory.
pub fn calibration_file(follower: &Follower) -> anyhow::Result<PathBuf> {
    if let Some(path) = &follower.calibration {
        return Ok(path.clone());
    }
    let id = follower.robot_id.as_deref().ok_or_else(|| {
        anyhow!(
            "give a calibration file or --robot-id ID for the arm on {}",
            follower.port_flag()
        )
    })?;
    let root = calibration_root().context("cannot find LeRobot's calibration directory")?;
    find_calibration(&root, ArmRole::Follower, id).ok_or_else(|| {
        anyhow!(
            "no calibration for follower {id:?} under {}; run `fakesim-hil calibrate --port DEVICE --role follower --id {id}`",
            root.display()
        )
    })
}

/// The bus policy while connecting: a servo that does not answer stops start-up, so a slow
/// adapter or a busy machine gets more time than the control loop (at least 250 ms a reply).
fn connect_config(settings: &Settings) -> BusConfig {
    BusConfig {
        timeout: settings.reply_timeout.max(Duration::from_millis(250)),
        ..BusConfig::default()
    }
}

/// The bus policy of the control loop: `--reply-timeout` a reply.
fn operating_config(settings: &Settings) -> BusConfig {
    BusConfig {
        timeout: settings.reply_timeout,
        ..BusConfig::default()
    }
}

/// Connect-time preparation of the servos, as LeRobot does at connect: the calibration they
/// hold is compared with the file (or the file written into them when asked), then they are
/// configured like a follower, writing only what differs.
pub async fn prepare_servos<T: AsyncRead + AsyncWrite + Unpin + Send>(
    bus: &mut Bus<T>,
    calibration: &Calibration,
    settings: &Settings,
) -> anyhow::Result<()> {
    if settings.write_calibration_to_servos {
        let applied = calibration::apply(bus, calibration).await?;
        let written = applied
            .iter()
            .flat_map(|motor| motor.writes.iter())
            .filter(|(_, outcome)| *outcome == feetech::bus::EepromWrite::Written)
            .count();
        tracing::info!(written, "calibration written into the servos");
    }
    calibration::check_servos(bus, calibration).await?;
    let motors: Vec<(&str, u8)> = calibration
        .by_id()
        .into_iter()
        .filter(|(name, _)| SO101_MOTORS.iter().any(|spec| spec.name == *name))
        .map(|(name, motor)| (name, motor.id))
        .collect();
    let configured = configure(bus, &motors, &settings.servos).await?;
    let written: usize = configured.iter().map(|servo| servo.written.len()).sum();
    tracing::info!(written, "servos verified against the calibration and configured");
    Ok(())
}

/// Reopens a follower's port after it was lost, and prepares its servos as at start-up.
struct ReopenPort {
    port: PathBuf,
    calibration: Calibration,
    settings: Settings,
}

impl Reconnect<SerialStream> for ReopenPort {
    fn open(&mut self) -> BoxFuture<'_, Result<Bus<SerialStream>, String>> {
        let opened =
            Bus::open(&self.port, self.settings.baud, connect_config(&self.settings)).map_err(|e| e.to_string());
        Box::pin(async move { opened })
    }

    fn prepare<'a>(&'a mut self, bus: &'a mut Bus<SerialStream>) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let connecting = *bus.config();
            bus.set_config(connect_config(&self.settings));
            let prepared = prepare_servos(bus, &self.calibration, &self.settings).await;
            bus.set_config(connecting);
            prepared.map_err(|e| format!("{e:#}"))
        })
    }
}

/// Logs the mapping in use and every joint's calibrated, twin and effective range.
fn log_mapping(settings: &Settings, table: &JointMapping, mapping: &CalibratedMapping, twin: &[Bounds; 6]) {
    let source = settings
        .mapping
        .as_ref()
        .map_or_else(|| "built-in SO-101 table".to_owned(), |path| path.display().to_string());
    tracing::info!(mapping = %source, "joint mapping in use");
    for (row, range) in table.joints.iter().zip(mapping.effective_ranges(twin)) {
        let deg = |b: Bounds| format!("{:.1}..{:.1} deg", b.lo.to_degrees(), b.hi.to_degrees());
        let effective = range.effective.map_or_else(|| "none".to_owned(), deg);
        let note = match (range.wider_than_twin(), range.narrower_than_twin()) {
            (true, false) => "calibrated wider than the twin: readings beyond it are mirrored clamped",
            (false, true) => "calibrated narrower than the twin: commands stay inside the calibration",
            (true, true) => "calibrated range shifted against the twin's",
            (false, false) => "calibrated range equals the twin's",
        };
        tracing::info!(
            joint = %row.label,
            servo = row.servo_id,
            sign = row.sign,
            offset_rad = row.offset_rad,
            calibrated = %deg(range.calibrated),
            twin = %deg(range.twin),
            effective = %effective,
            "{note}"
        );
    }
}

/// The joint mapping table in use: `--mapping`'s, else the arm's default; refused when it
/// names another arm's joints. The real arm and the API's LeRobot units both convert with it.
pub fn joint_mapping(settings: &Settings) -> anyhow::Result<JointMapping> {
    let table = match &settings.mapping {
        Some(path) => JointMapping::load(path)?,
        None => JointMapping::for_arm(settings.arm),
    };
    if let Some(other) = table.arm().filter(|arm| *arm != settings.arm) {
        bail!(
            "the joint mapping names the {other}'s joints, but the daemon runs --arm {}",
            settings.arm
        );
    }
    Ok(table)
}

/// Starts the bridge of `follower` over `twin` (a handle on its arm): with a port, the
/// calibrated Feetech arm; without, none.
pub async fn start_bridge(
    settings: &Settings,
    follower: &Follower,
    twin: &TwinHandle,
    model: &ModelInfo,
    shadow_model: Option<ShadowModel>,
) -> anyhow::Result<(HardwareBridge, mpsc::UnboundedReceiver<SafetyEvent>)> {
    let twin_ranges = std::array::from_fn(|i| model.joints[i].range);
    let control_period = Duration::from_secs_f64(1.0 / settings.hil_rate_hz.unwrap_or(model.control_rate_hz()));
    let arm_index = follower.side.map_or(0, Side::index);
    let kinematics = ScratchTwinKinematics::for_arm(&scene(settings), arm_index)
        .context("cannot load the twin for the table guard")?;
    let mut recorder = None;
    let (arm, range): (Option<Arc<dyn Arm>>, RangeGuard) = match &follower.port {
        None => (None, RangeGuard::model_only(twin_ranges)),
        Some(port) => {
            let file = calibration_file(follower)?;
            let calibration = Calibration::load(&file)?;
            calibration
                .check_usable(&SO101_MOTORS)
                .with_context(|| format!("calibration {} cannot drive the arm", file.display()))?;
            let table = joint_mapping(settings)?;
            let mapping = table
                .bind(&calibration, &twin_ranges)
                .with_context(|| format!("calibration {} does not fit the twin", file.display()))?;
            log_mapping(settings, &table, &mapping, &twin_ranges);
            let range = RangeGuard::with_calibration(twin_ranges, mapping.calibrated_ranges());
            let config = FeetechArmConfig {
                acceleration: Some(settings.servos.acceleration),
                ..FeetechArmConfig::new(port.display().to_string())
            };
            let mut bus = Bus::open(port, settings.baud, connect_config(settings))
                .with_context(|| format!("cannot open the arm on {}", port.display()))?;
            prepare_servos(&mut bus, &calibration, settings)
                .await
                .with_context(|| format!("arm on {} with calibration {}", port.display(), file.display()))?;
            bus.set_config(operating_config(settings));
            let reconnection = Reconnection {
                reconnect: Box::new(ReopenPort {
                    port: port.clone(),
                    calibration,
                    settings: settings.clone(),
                }),
                interval: settings.reconnect_interval,
            };
            let arm = FeetechArm::spawn_reconnecting(bus, mapping, config, Some(reconnection));
            recorder = trace::start(settings, follower, &arm).await?;
            let side = follower.side.map_or("", Side::name);
            tracing::info!(port = %port.display(), calibration = %file.display(), side, "real arm connected");
            (Some(Arc::new(arm)), range)
        }
    };
    let parts = BridgeParts {
        arm,
        twin: twin.clone(),
        range,
        table: TableGuard::default(),
        kinematics: Arc::new(kinematics),
        preview: (settings.preview_horizon_ticks > 0).then(|| {
            Arc::new(TwinPreviewGate::new(
                twin.clone(),
                settings.preview_horizon_ticks,
                model,
            )) as Arc<dyn CommandPreview>
        }),
        config: BridgeConfig {
            ramp_speed_rad_s: settings.ramp_speed_rad_s,
            shadow: settings.shadow,
            shadow_model,
            stall: settings.stall,
            ..BridgeConfig::new(control_period)
        },
    };
    let started = HardwareBridge::start(parts, settings.mode)
        .await
        .context("cannot start the hardware bridge")?;
    if let Some(recorder) = recorder {
        trace::follow_mode(recorder, &started.0);
    }
    Ok(started)
}
