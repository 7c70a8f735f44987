//! The command line of `fakesim-hil` (the binary's side): without a subcommand it runs the
//! daemon with the library's options; the hardware tools' subcommands are why the binary, not
//! the library, depends on `fakesim-hardware-tools` (and through it on `feetech-emu`).

use crate::identify::IdentifyArgs;
use crate::service::InstallServiceArgs;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use fakesim_hardware_tools::align::AlignArgs;
use fakesim_hardware_tools::calibrate::CalibrateArgs;
use fakesim_hardware_tools::emulate::EmulateArgs;
use fakesim_hardware_tools::scan::ScanArgs;
use fakesim_hardware_tools::setup_ids::SetupIdsArgs;
use fakesim_hardware_tools::teleop::TeleopArgs;
use fakesim_hil::McpArgs;
use fakesim_hil::config::{DaemonOptions, with_defaults};

/// The flag whose default differs under `mcp` (warn: its stdout carries MCP).
const MCP_LOG_LEVEL_FLAG: &str = "log-level";

/// The SO-101 twin, paired with the real arm when given --port, served over gRPC.
#[derive(Debug, Parser)]
#[command(name = "fakesim-hil", version, about)]
pub struct Cli {
    /// A tool to run instead of the daemon; none runs the daemon.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of the daemon.
    #[command(flatten)]
    pub daemon: DaemonOptions,
}

impl Cli {
    /// Parses the process's arguments, the help showing each option's default; exits on
    /// `--help`, `--version` or an error, as clap does.
    pub fn from_env() -> Self {
        let command =
            with_defaults(Cli::command(), &[]).mut_subcommand("mcp", |mcp| with_defaults(mcp, &[MCP_LOG_LEVEL_FLAG]));
        let matches = command.get_matches();
        Cli::from_arg_matches(&matches).unwrap_or_else(|error| error.exit())
    }
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
    Emulate(Box<EmulateArgs>),
    /// Drive a follower arm and the twin from a leader arm moved by hand, until Ctrl-C.
    Teleop(TeleopArgs),
    /// Fit each joint's dynamics to recordings of one arm and write its dynamics profile.
    Identify(Box<IdentifyArgs>),
    /// Serve the episode tools over MCP on stdin/stdout, for an agent host that launches it.
    Mcp(Box<McpArgs>),
    /// Install the udev rules and a systemd unit serving one arm after every boot.
    InstallService(InstallServiceArgs),
    /// Print every setting (config key, flag, default, meaning) as the manual's Markdown table.
    #[command(hide = true)]
    ConfigTable,
}
