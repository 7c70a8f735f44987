//! The command line of `fakesim-hil`: without a subcommand it runs the daemon.

use crate::listen::ListenAddr;
use crate::mcp::McpArgs;
use clap::{Args, Parser, Subcommand};
use fakesim_hardware_tools::align::AlignArgs;
use fakesim_hardware_tools::calibrate::CalibrateArgs;
use fakesim_hardware_tools::emulate::EmulateArgs;
use fakesim_hardware_tools::scan::ScanArgs;
use fakesim_hardware_tools::setup_ids::SetupIdsArgs;
use fakesim_hardware_tools::teleop::TeleopArgs;
use fakesim_twin::RenderQuality;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The SO-101 twin, paired with the real arm when given --port, served over gRPC.
#[derive(Debug, Parser)]
#[command(name = "fakesim-hil", version, about)]
pub struct Cli {
    /// A tool to run instead of the daemon; none runs the daemon.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of the daemon.
    #[command(flatten)]
    pub daemon: DaemonArgs,
    /// Who may call the daemon and move the arm.
    #[command(flatten)]
    pub access: AccessArgs,
}

/// Tools besides the daemon.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List serial ports and the servos answering on them (id, model, firmware, baud rate).
    Scan(ScanArgs),
    /// Give each servo of an SO-101 its id and baud rate, one servo at a time (gripper first).
    SetupIds(SetupIdsArgs),
    /// Calibrate an SO-101 arm interactively and write LeRobot's calibration file, or --verify one.
    Calibrate(CalibrateArgs),
    /// Measure each joint's sign and offset against the twin in a few poses and write a
    /// joint-mapping file for --mapping.
    Align(AlignArgs),
    /// Serve a virtual SO-101 servo bus on a pseudo-terminal until Ctrl-C.
    Emulate(EmulateArgs),
    /// Drive a follower arm and the twin from a leader arm moved by hand, until Ctrl-C.
    Teleop(TeleopArgs),
    /// Serve the episode tools over MCP on stdin/stdout, for an agent host that launches it.
    Mcp(McpArgs),
}

/// The mode the daemon starts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StartMode {
    /// The twin only.
    Sim,
    /// The twin follows the real arm moved by hand; motion calls are refused.
    Mirror,
    /// API motions run on the real arm; the twin mirrors it.
    Hil,
}

/// Options of the daemon. Each one overrides the same key of `--config`; unset ones fall back to
/// the file, then to the default shown.
#[derive(Debug, Default, Args)]
pub struct DaemonArgs {
    /// Address to serve gRPC on, HOST:PORT or unix:PATH [default: 127.0.0.1:50051]; port 0
    /// picks a free port.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<ListenAddr>,
    /// Serial device of the real arm's servo bus; without it the twin runs alone.
    #[arg(long, value_name = "DEVICE")]
    pub port: Option<PathBuf>,
    /// Baud rate of the servo bus [default: 1000000].
    #[arg(long, value_name = "BAUD")]
    pub baud: Option<u32>,
    /// LeRobot calibration file of the follower arm (else found by --robot-id).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Id of the follower arm in LeRobot's calibration directory (robots/so_follower/ID.json,
    /// else the older robots/so101_follower/ID.json).
    #[arg(long, value_name = "ID")]
    pub robot_id: Option<String>,
    /// Joint-mapping file (JSON, as `fakesim-hil align` writes it) instead of the built-in
    /// SO-101 table.
    #[arg(long, value_name = "FILE")]
    pub mapping: Option<PathBuf>,
    /// Speed limit (rad/s) of the ramp from the held pose to the first targets after torque
    /// comes on, a watchdog hold or a fault hold [default: 0.5].
    #[arg(long, value_name = "RAD_S")]
    pub ramp_speed: Option<f64>,
    /// In mirror and hil, a joint held this far (rad) from where the shadow predicts it, under
    /// --shadow-load, for --shadow-ticks is blocked: the arm is held [default: 0.05].
    #[arg(long, value_name = "RAD")]
    pub shadow_residual: Option<f64>,
    /// Load (percent of full duty) that backs a blocked joint; below it a joint counts as
    /// unloaded for drift [default: 30].
    #[arg(long, value_name = "PERCENT")]
    pub shadow_load: Option<f64>,
    /// Control ticks a residual under load must last before the joint counts as blocked
    /// [default: 3].
    #[arg(long, value_name = "TICKS")]
    pub shadow_ticks: Option<u32>,
    /// Smallest steady offset at rest (rad) reported as calibration drift, below 0.3
    /// [default: 0.02].
    #[arg(long, value_name = "RAD")]
    pub shadow_drift: Option<f64>,
    /// Write the calibration file into the servos at connect (EEPROM, only values that
    /// differ) instead of refusing servos that hold another calibration.
    #[arg(long)]
    pub write_calibration_to_servos: bool,
    /// Mode to start in with --port [default: mirror]: sim, mirror or hil.
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<StartMode>,
    /// Fix the scene every episode starts: ResetTask then refuses scene arguments.
    #[arg(long, num_args = 3, value_names = ["SUITE", "TASK_INDEX", "INIT_STATE_INDEX"])]
    pub lock_task: Option<Vec<String>>,
    /// Step budget of an episode [default: 300].
    #[arg(long, value_name = "STEPS")]
    pub max_steps: Option<u32>,
    /// Directory episode artifacts are written under [default: ./runs].
    #[arg(long, value_name = "DIR")]
    pub runs_dir: Option<PathBuf>,
    /// Default width and height of camera images, pixels [default: 256].
    #[arg(long, value_name = "PIXELS")]
    pub image_size: Option<u32>,
    /// Control ticks per second in hil mode, 20 to 100 [default: the twin's own, 20]; the
    /// stop-reason windows stay counted in ticks.
    #[arg(long, value_name = "HZ")]
    pub hil_rate_hz: Option<f64>,
    /// Control ticks each command for the real arm is previewed on the twin for, after its own
    /// (a contact or a joint past its range refuses it before it moves); 0 turns the preview
    /// off [default: 4].
    #[arg(long, value_name = "TICKS")]
    pub preview_horizon_ticks: Option<u32>,
    /// Camera image quality [default: full]: fast (no multisampling, shadows or reflections)
    /// or full (the scene as written).
    #[arg(long, value_name = "LEVEL")]
    pub render_quality: Option<RenderQuality>,
    /// TOML file whose keys are the long names of these options and of the access options
    /// (lock-task is a table: suite, task-index, init-state-index), plus a `[servos]` table of
    /// connect-time servo settings
    /// (return-delay, acceleration, max-acceleration, p, i, d, and `[servos.gripper]`
    /// max-torque, protection-current, overload-torque); flags override it. Unknown keys are
    /// refused.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
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
    pub live_view: Option<fakesim_live_view::Target>,
    /// Log filter, a level or tracing directives such as `info,fakesim_hil=debug` [default: info].
    #[arg(long, value_name = "FILTER")]
    pub log_level: Option<String>,
}

/// Options of the daemon on who may call it and move the arm (not taken by `mcp`, whose own
/// `--token-file` and TLS options are a client's). Each overrides the same key of `--config`.
#[derive(Debug, Default, PartialEq, Args)]
pub struct AccessArgs {
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
}
