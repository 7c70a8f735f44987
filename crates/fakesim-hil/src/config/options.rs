//! Every option of the daemon, defined once: each field is a flag (clap) and the config-file
//! key of the same name (serde), grouped by concern; [`defaults`] holds every default.

use crate::config::ListenAddr;
use crate::config::sources::TableSource;
use crate::config::text::{CameraFile, camera_file_table, lock_task_table, parsed, shown};
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use fakesim_bridge::hil::{Mode, ShadowConfig, StallConfig};
use fakesim_bridge::twin::DEFAULT_PREVIEW_HORIZON_TICKS;
use fakesim_twin::{ArmType, PartColors, RenderQuality, Rgb, Variations};
use feetech::configure::ServoSettings;
use serde::{Deserialize, Serialize};
use std::net::SocketAddr;
use std::path::PathBuf;

/// The least a servo's reply is waited for by default (ms): a healthy SO-101 bus answers a
/// sync read of six servos in 1–3 ms (more behind an adapter with a long latency timer, which
/// the measured round trips then cover), so a silent servo is seen within 6 × 10 ms.
const DEFAULT_REPLY_TIMEOUT_MS: f64 = 10.0;

/// A group of options laid over another: each option set in `self` wins.
pub trait Overlay {
    /// `self` where set, else `under`.
    #[must_use]
    fn over(self, under: Self) -> Self;
}

impl<T> Overlay for Option<T> {
    fn over(self, under: Self) -> Self {
        self.or(under)
    }
}

impl<T> Overlay for Vec<T> {
    /// `under`'s items, then `self`'s.
    fn over(self, under: Self) -> Self {
        under.into_iter().chain(self).collect()
    }
}

impl Overlay for bool {
    fn over(self, under: Self) -> Self {
        self || under
    }
}

/// Implements [`Overlay`] for a group, field by field (a field left out does not compile).
macro_rules! overlay {
    ($group:ident { $($field:ident),* $(,)? }) => {
        impl Overlay for $group {
            fn over(self, under: Self) -> Self {
                $group { $($field: self.$field.over(under.$field)),* }
            }
        }
    };
}

/// Options of the daemon. Each flag overrides the same key of `--config`; unset ones fall back
/// to the file, then to the default shown.
#[derive(Debug, Default, Clone, PartialEq, Args, Deserialize, Serialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct DaemonOptions {
    /// Address to serve gRPC on, HOST:PORT or unix:PATH; port 0 picks a free port.
    #[arg(long, value_name = "ADDR")]
    #[serde(deserialize_with = "parsed", serialize_with = "shown")]
    pub listen: Option<ListenAddr>,
    /// Also serve the episode tools over MCP's streamable HTTP at http://ADDR/mcp, or https://
    /// with --tls-cert; the same access rules as gRPC (off loopback: TLS, and a token or client
    /// certificates).
    #[arg(long, value_name = "ADDR")]
    pub mcp_listen: Option<SocketAddr>,
    /// With --mcp-listen, serve only the tools that move nothing.
    #[arg(long)]
    pub mcp_observe_only: bool,
    /// Log the twin, the real arm, the shadow and the events to Rerun as they happen: spawn (the
    /// `rerun` viewer on PATH), connect[=HOST:PORT] (a running viewer), serve[=HOST:PORT[,GRPC_PORT]]
    /// (the web viewer, loopback only) or save=PATH.rrd [default: off].
    #[arg(long, value_name = "TARGET")]
    #[serde(deserialize_with = "parsed", serialize_with = "shown")]
    pub live_view: Option<fakesim_live_view::Target>,
    /// The real arm.
    #[command(flatten)]
    #[serde(flatten)]
    pub arm: ArmOptions,
    /// The shadow's thresholds.
    #[command(flatten)]
    #[serde(flatten)]
    pub shadow: ShadowOptions,
    /// The options `fakesim-hil mcp` takes too.
    #[command(flatten)]
    #[serde(flatten)]
    pub twin: TwinOptions,
    /// Who may call the daemon and move the arm.
    #[command(flatten)]
    #[serde(flatten)]
    pub access: AccessOptions,
}

overlay!(DaemonOptions {
    listen,
    mcp_listen,
    mcp_observe_only,
    live_view,
    arm,
    shadow,
    twin,
    access
});

/// Options of the real arm and of driving it.
#[derive(Debug, Default, Clone, PartialEq, Args, Deserialize, Serialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct ArmOptions {
    /// Serial device of the real arm's servo bus; without it the twin runs alone.
    #[arg(long, value_name = "DEVICE")]
    pub port: Option<PathBuf>,
    /// Two arms at once: the twin holds a pair of --arm (`left/`, `right/`), sim-only unless
    /// --left-port and --right-port pair it with two real followers.
    #[arg(long)]
    pub pair: bool,
    /// Serial device of the left arm of a pair (with --right-port; implies --pair).
    #[arg(long, value_name = "DEVICE")]
    pub left_port: Option<PathBuf>,
    /// Serial device of the right arm of a pair (with --left-port; implies --pair).
    #[arg(long, value_name = "DEVICE")]
    pub right_port: Option<PathBuf>,
    /// Baud rate of the servo bus.
    #[arg(long, value_name = "BAUD")]
    pub baud: Option<u32>,
    /// LeRobot calibration file of the follower arm (else found by --robot-id).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// LeRobot calibration file of a pair's left follower (else found by --robot-id).
    #[arg(long, value_name = "FILE")]
    pub left_calibration: Option<PathBuf>,
    /// LeRobot calibration file of a pair's right follower (else found by --robot-id).
    #[arg(long, value_name = "FILE")]
    pub right_calibration: Option<PathBuf>,
    /// Id of the follower arm in LeRobot's calibration directory (robots/so_follower/ID.json,
    /// else the older robots/so101_follower/ID.json); a pair's arms are ID_left and ID_right,
    /// as LeRobot's bi_so_follower names them.
    #[arg(long, value_name = "ID")]
    pub robot_id: Option<String>,
    /// Dynamics profile of the arm (TOML, as `fakesim-hil identify` writes it) for the twin, its
    /// preview and the shadow [default: ID.dynamics.toml beside the calibration of --robot-id
    /// or --calibration, if there is one].
    #[arg(long, value_name = "FILE")]
    pub dynamics: Option<PathBuf>,
    /// Dynamics profile of a pair's left arm [default: found as for --dynamics, by ID_left].
    #[arg(long, value_name = "FILE")]
    pub left_dynamics: Option<PathBuf>,
    /// Dynamics profile of a pair's right arm [default: found as for --dynamics, by ID_right].
    #[arg(long, value_name = "FILE")]
    pub right_dynamics: Option<PathBuf>,
    /// Load no dynamics profile, not even one found beside the calibration: every arm keeps the
    /// model's own dynamics and the shadow its hand-set lag.
    #[arg(long)]
    pub no_dynamics: bool,
    /// Joint-mapping file (JSON, as `fakesim-hil align` writes it) instead of the built-in
    /// table of --arm.
    #[arg(long, value_name = "FILE")]
    pub mapping: Option<PathBuf>,
    /// Speed limit (rad/s) of the ramp from the held pose to the first targets after torque
    /// comes on, a watchdog hold or a fault hold.
    #[arg(long, value_name = "RAD_S")]
    pub ramp_speed: Option<f64>,
    /// Write the calibration file into the servos at connect (EEPROM, only values that
    /// differ) instead of refusing servos that hold another calibration.
    #[arg(long)]
    pub write_calibration_to_servos: bool,
    /// Mode to start in with a real arm: sim, mirror or hil [default: mirror with --port or a
    /// pair's ports, else sim].
    #[arg(long, value_name = "MODE", value_parser = mode_parser())]
    #[serde(deserialize_with = "parsed")]
    pub mode: Option<Mode>,
    /// Control ticks per second in hil mode, 20 to 100 [default: the twin's own, 20]; the
    /// stop-reason windows stay counted in ticks.
    #[arg(long, value_name = "HZ")]
    pub hil_rate_hz: Option<f64>,
    /// Control ticks each command for the real arm is previewed on the twin for, after its own
    /// (a contact or a joint past its range refuses it before it moves); 0 turns the preview
    /// off.
    #[arg(long, value_name = "TICKS")]
    pub preview_horizon_ticks: Option<u32>,
    /// Seconds between attempts to reopen a lost serial port (each attempt verifies the
    /// servos as at start-up; the arm returns in mirror with torque off).
    #[arg(long, value_name = "S")]
    pub reconnect_interval: Option<f64>,
    /// Never reopen a lost serial port: the real arm stays lost until the daemon restarts.
    #[arg(long)]
    pub no_reconnect: bool,
    /// The least milliseconds the daemon waits for a servo's reply before it asks again (one
    /// more try; three unanswered reads in a row count the servo lost). It waits longer when
    /// the measured round trips ask for it: twice their 99th percentile.
    #[arg(long, value_name = "MS")]
    pub reply_timeout: Option<f64>,
    /// Record a trace of each real arm into this directory (created if missing): every goal
    /// written and every reading taken, with its bus time, the mode and the torque, in
    /// ROBOT_ID-UTCTIME.fstrace (the calibration file's name without a robot id), the input of
    /// `fakesim-hil identify`.
    #[arg(long, value_name = "DIR")]
    pub trace: Option<PathBuf>,
    /// Connect-time servo settings: a table of the config file only (its keys are listed with
    /// the other settings').
    #[arg(skip)]
    #[serde(skip_serializing)]
    pub servos: Option<ServoSettings>,
    /// The stall guard's limits per joint: a table of the config file only.
    #[arg(skip)]
    #[serde(skip_serializing)]
    pub stall: Option<StallConfig>,
}

overlay!(ArmOptions {
    port,
    pair,
    left_port,
    right_port,
    baud,
    calibration,
    left_calibration,
    right_calibration,
    robot_id,
    dynamics,
    left_dynamics,
    right_dynamics,
    no_dynamics,
    mapping,
    ramp_speed,
    write_calibration_to_servos,
    mode,
    hil_rate_hz,
    preview_horizon_ticks,
    reconnect_interval,
    no_reconnect,
    reply_timeout,
    trace,
    servos,
    stall,
});

/// The shadow's thresholds for blocked joints and calibration drift, in mirror and hil.
#[derive(Debug, Default, Clone, PartialEq, Args, Deserialize, Serialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct ShadowOptions {
    /// In mirror and hil, a joint held this far (rad) from where the shadow predicts it, under
    /// --shadow-load, for --shadow-ticks is blocked: the arm is held.
    #[arg(long, value_name = "RAD")]
    pub shadow_residual: Option<f64>,
    /// Load (percent of full duty) that backs a blocked joint; below it a joint counts as
    /// unloaded for drift.
    #[arg(long, value_name = "PERCENT")]
    pub shadow_load: Option<f64>,
    /// Control ticks a residual under load must last before the joint counts as blocked.
    #[arg(long, value_name = "TICKS")]
    pub shadow_ticks: Option<u32>,
    /// Smallest steady offset at rest (rad) reported as calibration drift, below 0.3.
    #[arg(long, value_name = "RAD")]
    pub shadow_drift: Option<f64>,
}

overlay!(ShadowOptions {
    shadow_residual,
    shadow_load,
    shadow_ticks,
    shadow_drift
});

/// The options of the episodes and the twin, which `fakesim-hil mcp` takes for its in-process
/// twin too (where each means the same).
#[derive(Debug, Default, Clone, PartialEq, Args, Deserialize, Serialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct TwinOptions {
    /// The arm the twin holds and the real arm is: so101 or so100 (joints named `1`..`6` or
    /// Rotation..Jaw, LeRobot's labels on both).
    #[arg(long, value_name = "ARM")]
    #[serde(deserialize_with = "parsed", serialize_with = "shown")]
    pub arm: Option<ArmType>,
    /// Fix the scene every episode starts: resetting the task then refuses scene arguments.
    #[arg(long, num_args = 3, value_names = ["SUITE", "TASK_INDEX", "INIT_STATE_INDEX"])]
    #[serde(deserialize_with = "lock_task_table", skip_serializing)]
    pub lock_task: Option<Vec<String>>,
    /// Step budget of an episode.
    #[arg(long, value_name = "STEPS")]
    pub max_steps: Option<u32>,
    /// Directory episode artifacts are written under.
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
    /// Default width and height of camera images, pixels.
    #[arg(long, value_name = "PIXELS")]
    pub image_size: Option<u32>,
    /// Camera image quality: fast (no multisampling, shadows or reflections) or full (the scene
    /// as written).
    #[arg(long, value_name = "LEVEL")]
    #[serde(deserialize_with = "parsed", serialize_with = "shown")]
    pub render_quality: Option<RenderQuality>,
    /// Colour the cameras draw the arm's printed parts in, #rrggbb (both arms of a pair).
    #[arg(long, value_name = "#RRGGBB")]
    #[serde(deserialize_with = "parsed", serialize_with = "shown")]
    pub printed_color: Option<Rgb>,
    /// Colour the cameras draw the arm's servo cases in, #rrggbb (both arms of a pair).
    #[arg(long, value_name = "#RRGGBB")]
    #[serde(deserialize_with = "parsed", serialize_with = "shown")]
    pub servo_color: Option<Rgb>,
    /// A photo of the real scene shown behind what a camera sees of the arms and the task
    /// objects, CAMERA=FILE (PNG or JPEG of the frames' aspect ratio, resized to them); one per
    /// camera, repeatable; in the config file a `[backdrop]` table of camera = "file".
    #[arg(long, value_name = "CAMERA=FILE")]
    #[serde(deserialize_with = "camera_file_table", skip_serializing)]
    pub backdrop: Option<Vec<CameraFile>>,
    /// The ranges each episode's look is drawn within from its seed: a table of the config
    /// file only (its keys are listed with the other settings').
    #[arg(skip)]
    #[serde(skip_serializing)]
    pub variations: Option<Variations>,
    /// A camera profile (TOML file: name, width, height, fovy-deg or fx fy cx cy, pos, quat,
    /// optional mount and distortion) added to the twin's cameras, its frames at its width and
    /// height; repeat for more. A profile named front or wrist replaces that standard one. In
    /// the config file, `[[camera]]` tables hold profiles themselves; flags' profiles come after
    /// the file's [default: front (webcam), wrist (the published wrist camera)].
    #[arg(long, value_name = "FILE")]
    #[serde(skip_serializing)]
    pub camera: Vec<TableSource>,
    /// A flat printed board the cameras draw in the scene (TOML file: image, a PNG or JPEG
    /// relative to the file; size, width and height in metres; pos and quat of its face's centre;
    /// optional mount, the body it rides on), such as a calibration board in the gripper; it
    /// collides with nothing and weighs nothing. Repeat for more; in the config file,
    /// `[[board]]` tables hold boards themselves.
    #[arg(long, value_name = "FILE")]
    #[serde(skip_serializing)]
    pub board: Vec<TableSource>,
    /// TOML file whose keys are the long names of the daemon's options (lock-task is a table:
    /// suite, task-index, init-state-index), plus a `[servos]` table of connect-time servo
    /// settings; flags override it; unknown keys are refused. For `mcp` its listen key is
    /// ignored, a port or mcp-listen refused.
    #[arg(long, value_name = "FILE")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Log filter, a level or tracing directives such as `info,fakesim_hil=debug` (`mcp`:
    /// warn, on stderr only, as stdout carries MCP).
    #[arg(long, value_name = "FILTER")]
    pub log_level: Option<String>,
}

overlay!(TwinOptions {
    arm,
    lock_task,
    max_steps,
    runs_dir,
    image_size,
    render_quality,
    printed_color,
    servo_color,
    backdrop,
    variations,
    camera,
    board,
    config,
    log_level,
});

/// Options on who may call the daemon and move the arm (not taken by `mcp`, whose own
/// `--token-file` and TLS options are a client's).
#[derive(Debug, Default, Clone, PartialEq, Args, Deserialize, Serialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct AccessOptions {
    /// TLS certificate chain (PEM) to serve with, with --tls-key; required off loopback.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// CA certificates (PEM) client certificates are verified against; a verified client
    /// certificate authenticates its connection.
    #[arg(long, value_name = "FILE")]
    pub tls_client_ca: Option<PathBuf>,
    /// File holding the bearer token every call must carry [default: FAKESIM_HIL_TOKEN if set].
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Require the control lease for motion in sim too (mirror and hil always require it).
    #[arg(long)]
    pub lease_in_sim: bool,
    /// Calls the gRPC server works on at once over all connections; one more is refused at
    /// once, RESOURCE_EXHAUSTED server_busy with a retry hint.
    #[arg(long, value_name = "N")]
    pub max_calls: Option<u32>,
    /// Calls one gRPC connection may have open at once (HTTP/2's max concurrent streams): a
    /// client queues its further calls itself.
    #[arg(long, value_name = "N")]
    pub max_calls_per_connection: Option<u32>,
}

overlay!(AccessOptions {
    tls_cert,
    tls_key,
    tls_client_ca,
    token_file,
    lease_in_sim,
    max_calls,
    max_calls_per_connection
});

/// The default of every option that has one of its own: the one place defaults are set.
pub fn defaults() -> DaemonOptions {
    let shadow = ShadowConfig::default();
    let colors = PartColors::default();
    DaemonOptions {
        listen: Some(ListenAddr::default()),
        arm: ArmOptions {
            baud: Some(1_000_000),
            ramp_speed: Some(0.5),
            preview_horizon_ticks: Some(DEFAULT_PREVIEW_HORIZON_TICKS),
            reconnect_interval: Some(1.0),
            reply_timeout: Some(DEFAULT_REPLY_TIMEOUT_MS),
            ..ArmOptions::default()
        },
        shadow: ShadowOptions {
            shadow_residual: Some(shadow.residual_rad),
            shadow_load: Some(shadow.load_percent),
            shadow_ticks: Some(shadow.ticks),
            shadow_drift: Some(shadow.drift_rad),
        },
        twin: TwinOptions {
            arm: Some(ArmType::default()),
            max_steps: Some(300),
            runs_dir: Some(PathBuf::from("./runs")),
            image_size: Some(256),
            render_quality: Some(RenderQuality::default()),
            printed_color: Some(colors.printed),
            servo_color: Some(colors.servo),
            log_level: Some("info".to_owned()),
            ..TwinOptions::default()
        },
        access: AccessOptions {
            max_calls: Some(128),
            max_calls_per_connection: Some(32),
            ..AccessOptions::default()
        },
        ..DaemonOptions::default()
    }
}

/// `--mode`: one of the bridge's mode names, listed in the help.
fn mode_parser() -> impl TypedValueParser<Value = Mode> {
    PossibleValuesParser::new(Mode::ALL.map(Mode::name)).try_map(|name| name.parse::<Mode>())
}
