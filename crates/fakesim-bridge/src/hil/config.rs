//! How the hardware bridge runs: its settings and their defaults.

use super::shadow::{ShadowConfig, ShadowModel};
use super::stall::StallConfig;
use std::time::Duration;

/// How the bridge runs.
#[derive(Debug, Clone)]
pub struct BridgeConfig {
    /// How often the mirror loop reads the real arm (Hz); `None` reads again as soon as the
    /// last reading is in the twin, as fast as the bus allows.
    pub mirror_rate_hz: Option<f64>,
    /// One control tick in real time (the twin's control period).
    pub control_period: Duration,
    /// Entering `hil` is refused when any joint differs by more than this (rad).
    pub disagree_threshold_rad: f64,
    /// Speed of the slow move that brings the real arm to the twin's pose (rad/s).
    pub sync_speed_rad_s: f64,
    /// In `hil`, no command for longer than this holds the arm where it is.
    pub watchdog_timeout: Duration,
    /// Largest change of any joint goal from its measured position in one command (rad).
    pub max_delta_rad: f64,
    /// After torque comes on or the arm is held, goals ramp from the held position to the
    /// targets at this speed (rad/s) until they catch up.
    pub ramp_speed_rad_s: f64,
    /// The shadow's thresholds for obstructions and calibration drift.
    pub shadow: ShadowConfig,
    /// The arm's identified model, with a dynamics profile loaded: the shadow rolls it out
    /// instead of its hand-set lag.
    pub shadow_model: Option<ShadowModel>,
    /// The stall guard's limits per joint.
    pub stall: StallConfig,
}

impl BridgeConfig {
    /// Defaults for a control period: mirroring at the bus's own rate, 0.1 rad disagreement,
    /// 0.5 rad/s sync and ramp, a 1 s watchdog and 0.35 rad per command.
    pub fn new(control_period: Duration) -> Self {
        BridgeConfig {
            mirror_rate_hz: None,
            control_period,
            disagree_threshold_rad: 0.1,
            sync_speed_rad_s: 0.5,
            watchdog_timeout: Duration::from_secs(1),
            max_delta_rad: 0.35,
            ramp_speed_rad_s: 0.5,
            shadow: ShadowConfig::default(),
            shadow_model: None,
            stall: StallConfig::default(),
        }
    }
}
