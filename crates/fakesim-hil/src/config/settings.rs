//! The daemon's resolved settings: command-line flags over the `--config` file over defaults.

use crate::access::auth::{AuthPolicy, BearerToken, TOKEN_ENV};
use crate::access::tls::TlsFiles;
use crate::config::file;
use crate::config::listen::{ListenAddr, check_exposure};
use crate::config::options::{DaemonOptions, Overlay, defaults};
use crate::config::sources::{read_boards, read_profiles};
use crate::config::text::CameraFile;
use anyhow::{Context, bail};
use fakesim_bridge::hil::{Mode, ShadowConfig, StallConfig};
use fakesim_episode::tasks::TaskRef;
use fakesim_twin::{ArmType, Board, CameraProfile, PartColors, RenderQuality, Variations};
use feetech::configure::ServoSettings;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Longest preview horizon after a command for the real arm (control ticks): 2.5 s at 20 Hz.
const MAX_PREVIEW_HORIZON_TICKS: u32 = 50;

/// Control rates `hil-rate-hz` accepts (ticks per second).
const HIL_RATE_HZ: std::ops::RangeInclusive<f64> = 20.0..=100.0;
/// Seconds `--reconnect-interval` may be: often enough not to spin on a dead port, at most a minute.
const RECONNECT_INTERVAL_S: std::ops::RangeInclusive<f64> = 0.05..=60.0;
/// The reply timeouts a bus can run with (ms).
const REPLY_TIMEOUT_MS: std::ops::RangeInclusive<f64> = 5.0..=1000.0;

/// Everything the daemon runs with, after merging flags, file and defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Address gRPC is served on.
    pub listen: ListenAddr,
    /// Serial device of the real arm; `None` runs the twin alone.
    pub port: Option<PathBuf>,
    /// Two arms at once: the twin holds a pair of the arm.
    pub pair: bool,
    /// Serial devices of a pair's left and right arms (both or neither: checked).
    pub pair_ports: [Option<PathBuf>; 2],
    /// Calibration files of a pair's left and right followers, when given directly.
    pub pair_calibrations: [Option<PathBuf>; 2],
    /// Baud rate of the servo bus.
    pub baud: u32,
    /// The follower's LeRobot calibration file, when given directly.
    pub calibration: Option<PathBuf>,
    /// The follower's id in LeRobot's calibration directory.
    pub robot_id: Option<String>,
    /// The dynamics profile of the arm, when named directly.
    pub dynamics: Option<PathBuf>,
    /// Dynamics profiles of a pair's left and right arms, when named directly.
    pub pair_dynamics: [Option<PathBuf>; 2],
    /// Load no dynamics profile at all, not even one found by robot id.
    pub no_dynamics: bool,
    /// Joint-mapping file; `None` uses the built-in table of the arm.
    pub mapping: Option<PathBuf>,
    /// Speed limit of the ramp after torque comes on or a hold (rad/s).
    pub ramp_speed_rad_s: f64,
    /// The shadow's thresholds for blocked joints and calibration drift.
    pub shadow: ShadowConfig,
    /// Write the calibration file into servos that hold another one, instead of refusing.
    pub write_calibration_to_servos: bool,
    /// Register values the servos get at connect.
    pub servos: ServoSettings,
    /// The stall guard's limits per joint.
    pub stall: StallConfig,
    /// Mode at start (`sim` without a port).
    pub mode: Mode,
    /// The arm the twin holds and the real arm is.
    pub arm: ArmType,
    /// The scene every episode starts, when fixed with `--lock-task`.
    pub lock_task: Option<TaskRef>,
    /// Step budget of an episode.
    pub max_steps: u32,
    /// Directory episode artifacts are written under.
    pub runs_dir: PathBuf,
    /// Default width and height of camera images, pixels.
    pub image_size: u32,
    /// Control ticks per second in hil; `None` keeps the twin's own control rate.
    pub hil_rate_hz: Option<f64>,
    /// Ticks each command for the real arm is previewed for after its own; 0: no preview.
    pub preview_horizon_ticks: u32,
    /// Time between attempts to reopen a lost serial port; `None`: never reopened.
    pub reconnect_interval: Option<Duration>,
    /// How long the bus waits for a servo's reply before asking again.
    pub reply_timeout: Duration,
    /// Directory each real arm's trace is recorded into, if any.
    pub trace_dir: Option<PathBuf>,
    /// Camera image quality.
    pub render_quality: RenderQuality,
    /// The colours the cameras draw the arms' parts in.
    pub part_colors: PartColors,
    /// The photo shown behind each camera named, if any.
    pub backdrops: Vec<CameraFile>,
    /// The ranges each episode's look is drawn within (nothing varies by default).
    pub variations: Variations,
    /// Camera profiles added to the twin's cameras (over the standard `front` and `wrist`).
    pub cameras: Vec<CameraProfile>,
    /// Flat printed boards the cameras draw in the scene.
    pub boards: Vec<Board>,
    /// Address the MCP streamable-HTTP endpoint is served on, if any.
    pub mcp_listen: Option<SocketAddr>,
    /// The MCP endpoint serves only the tools that move nothing.
    pub mcp_observe_only: bool,
    /// Where the live view goes, if anywhere.
    pub live_view: Option<fakesim_live_view::Target>,
    /// Log filter (`tracing_subscriber::EnvFilter` syntax).
    pub log_level: String,
    /// TLS files; `None` serves plaintext (loopback only).
    pub tls: Option<TlsFiles>,
    /// The bearer token calls must carry, if any.
    pub token: Option<BearerToken>,
    /// Motion in sim needs the control lease too.
    pub lease_in_sim: bool,
    /// Calls the gRPC server works on at once, over all connections.
    pub max_calls: u32,
    /// Calls one gRPC connection may have open at once.
    pub max_calls_per_connection: u32,
}

impl Default for Settings {
    /// The settings of a daemon given no flags, no file and no environment.
    fn default() -> Self {
        Settings::assemble(defaults())
    }
}

impl Settings {
    /// Merges the options over the `--config` file (when given) over the defaults, and checks
    /// the result; the token comes from a token file only (as for the in-process twin of `mcp`).
    pub fn from_args(options: &DaemonOptions) -> anyhow::Result<Self> {
        Self::from_cli(options, |_| None)
    }

    /// The daemon's settings from its command line: [`Settings::from_args`], and the token from
    /// `env` (`FAKESIM_HIL_TOKEN`) when no token file is named.
    pub fn from_cli(options: &DaemonOptions, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Self> {
        let file = match &options.twin.config {
            Some(path) => file::read(path)?,
            None => DaemonOptions::default(),
        };
        let options = options.clone().over(file);
        let lock_task = options.twin.lock_task.as_deref().map(parse_lock_task).transpose()?;
        let cameras = read_profiles(&options.twin.camera)?;
        let boards = read_boards(&options.twin.board)?;
        let access = options.access.clone();
        let mut settings = Settings::assemble(options.over(defaults()));
        settings.lock_task = lock_task;
        settings.cameras = cameras;
        settings.boards = boards;
        settings.tls = tls_files(access.tls_cert, access.tls_key, access.tls_client_ca)?;
        settings.token = match access.token_file {
            Some(path) => Some(BearerToken::read(&path)?),
            None => env(TOKEN_ENV)
                .map(|text| BearerToken::new(&text).with_context(|| format!("environment variable {TOKEN_ENV}")))
                .transpose()?,
        };
        settings.check()?;
        Ok(settings)
    }

    /// The settings options laid over [`defaults`] name, but for the parts that can fail (the
    /// locked task, the TLS files, the token), left unset for [`Settings::from_cli`]. Every
    /// option with a default is set by then, so no `unwrap_or_default` below falls back.
    fn assemble(options: DaemonOptions) -> Settings {
        let DaemonOptions {
            listen,
            mcp_listen,
            mcp_observe_only,
            live_view,
            arm,
            shadow,
            twin,
            access,
        } = options;
        let sided_ports = arm.left_port.is_some() || arm.right_port.is_some();
        let hardware = arm.port.is_some() || sided_ports;
        Settings {
            listen: listen.unwrap_or_default(),
            mode: arm.mode.unwrap_or(if hardware { Mode::Mirror } else { Mode::Sim }),
            pair: arm.pair || sided_ports,
            pair_ports: [arm.left_port, arm.right_port],
            pair_calibrations: [arm.left_calibration, arm.right_calibration],
            port: arm.port,
            baud: arm.baud.unwrap_or_default(),
            calibration: arm.calibration,
            robot_id: arm.robot_id,
            dynamics: arm.dynamics,
            pair_dynamics: [arm.left_dynamics, arm.right_dynamics],
            no_dynamics: arm.no_dynamics,
            mapping: arm.mapping,
            ramp_speed_rad_s: arm.ramp_speed.unwrap_or_default(),
            shadow: ShadowConfig {
                residual_rad: shadow.shadow_residual.unwrap_or_default(),
                load_percent: shadow.shadow_load.unwrap_or_default(),
                ticks: shadow.shadow_ticks.unwrap_or_default(),
                drift_rad: shadow.shadow_drift.unwrap_or_default(),
            },
            write_calibration_to_servos: arm.write_calibration_to_servos,
            servos: arm.servos.unwrap_or_default(),
            stall: arm.stall.unwrap_or_default(),
            arm: twin.arm.unwrap_or_default(),
            lock_task: None,
            max_steps: twin.max_steps.unwrap_or_default(),
            runs_dir: twin.runs_dir.unwrap_or_default(),
            image_size: twin.image_size.unwrap_or_default(),
            hil_rate_hz: arm.hil_rate_hz,
            preview_horizon_ticks: arm.preview_horizon_ticks.unwrap_or_default(),
            reconnect_interval: (!arm.no_reconnect)
                .then(|| arm.reconnect_interval.unwrap_or_default())
                .map(|seconds| Duration::try_from_secs_f64(seconds).unwrap_or(Duration::ZERO)),
            reply_timeout: Duration::try_from_secs_f64(arm.reply_timeout.unwrap_or_default() / 1e3)
                .unwrap_or(Duration::ZERO),
            trace_dir: arm.trace,
            render_quality: twin.render_quality.unwrap_or_default(),
            part_colors: PartColors {
                printed: twin.printed_color.unwrap_or(PartColors::default().printed),
                servo: twin.servo_color.unwrap_or(PartColors::default().servo),
            },
            backdrops: twin.backdrop.unwrap_or_default(),
            variations: twin.variations.unwrap_or_default(),
            cameras: Vec::new(),
            boards: Vec::new(),
            mcp_listen,
            mcp_observe_only,
            live_view,
            log_level: twin.log_level.unwrap_or_default(),
            tls: None,
            token: None,
            lease_in_sim: access.lease_in_sim,
            max_calls: access.max_calls.unwrap_or_default(),
            max_calls_per_connection: access.max_calls_per_connection.unwrap_or_default(),
        }
    }

    /// Refuses values no daemon can run with.
    fn check(&self) -> anyhow::Result<()> {
        if self.max_steps == 0 {
            bail!("max-steps must be at least 1");
        }
        if self.image_size == 0 {
            bail!("image-size must be at least 1 pixel");
        }
        if self.max_calls == 0 || self.max_calls_per_connection == 0 {
            bail!("max-calls and max-calls-per-connection must be at least 1");
        }
        self.check_exposure(&self.listen)?;
        if !(self.ramp_speed_rad_s.is_finite() && self.ramp_speed_rad_s > 0.0) {
            bail!("ramp-speed must be a finite speed above 0 rad/s");
        }
        if self.preview_horizon_ticks > MAX_PREVIEW_HORIZON_TICKS {
            bail!(
                "preview-horizon-ticks must be from 0 (no preview) to {MAX_PREVIEW_HORIZON_TICKS}, got {}",
                self.preview_horizon_ticks
            );
        }
        self.shadow.check().map_err(anyhow::Error::msg)?;
        self.variations.check()?;
        if let Some(twice) = (self.backdrops.iter().enumerate())
            .find(|(i, b)| self.backdrops[..*i].iter().any(|other| other.camera == b.camera))
        {
            bail!(
                "backdrop: camera {:?} is given two photos; give one per camera",
                twice.1.camera
            );
        }
        self.stall.check().map_err(anyhow::Error::msg)?;
        if let Some(interval) = self.reconnect_interval
            && !(RECONNECT_INTERVAL_S.contains(&interval.as_secs_f64()))
        {
            bail!(
                "reconnect-interval must be from {} to {} seconds (or --no-reconnect), got {}",
                RECONNECT_INTERVAL_S.start(),
                RECONNECT_INTERVAL_S.end(),
                interval.as_secs_f64()
            );
        }
        let reply_ms = self.reply_timeout.as_secs_f64() * 1e3;
        if !REPLY_TIMEOUT_MS.contains(&reply_ms) {
            bail!(
                "reply-timeout must be from {} to {} ms, got {reply_ms}",
                REPLY_TIMEOUT_MS.start(),
                REPLY_TIMEOUT_MS.end()
            );
        }
        if let Some(hz) = self.hil_rate_hz
            && !HIL_RATE_HZ.contains(&hz)
        {
            bail!(
                "hil-rate-hz must be from {} to {} control ticks per second, got {hz}",
                HIL_RATE_HZ.start(),
                HIL_RATE_HZ.end()
            );
        }
        self.check_pair()?;
        self.check_dynamics()?;
        if !self.has_hardware() && self.mode != Mode::Sim {
            bail!(
                "--mode {:?} needs the real arm: give --port DEVICE (or --left-port and --right-port for a pair)",
                self.mode
            );
        }
        if self.trace_dir.is_some() && !self.has_hardware() {
            bail!("--trace records the real arm's bus: give --port DEVICE (or a pair's ports) too");
        }
        if self.port.is_some() && self.calibration.is_none() && self.robot_id.is_none() {
            bail!(
                "--port needs the arm's calibration: give --calibration FILE or --robot-id ID \
                 (run `fakesim-hil calibrate --port DEVICE --role follower --id ID` to make one)"
            );
        }
        Ok(())
    }
}

impl Settings {
    /// Whether real arms are attached: `--port`, or a pair's ports.
    pub fn has_hardware(&self) -> bool {
        self.port.is_some() || self.pair_ports.iter().any(Option::is_some)
    }

    /// Refuses a pair given half its ports, mixed with `--port`, or without calibrations.
    fn check_pair(&self) -> anyhow::Result<()> {
        let sided = self.pair_calibrations.iter().any(Option::is_some);
        if !self.pair {
            if sided {
                bail!(
                    "--left-calibration and --right-calibration are for a pair: give --left-port and --right-port too"
                );
            }
            return Ok(());
        }
        if self.port.is_some() {
            bail!("--port drives one arm; a pair takes --left-port DEVICE and --right-port DEVICE instead");
        }
        if self.calibration.is_some() {
            bail!("--calibration is one arm's; a pair takes --left-calibration FILE and --right-calibration FILE");
        }
        let ports = self.pair_ports.iter().filter(|port| port.is_some()).count();
        if ports == 1 {
            bail!("a pair needs both arms: give --left-port DEVICE and --right-port DEVICE");
        }
        if ports == 0 && (sided || self.robot_id.is_some()) {
            bail!("a pair's calibrations need its arms: give --left-port DEVICE and --right-port DEVICE");
        }
        if ports == 2 && self.robot_id.is_none() && self.pair_calibrations.iter().any(Option::is_none) {
            bail!(
                "a pair needs each arm's calibration: give --robot-id ID (LeRobot's ID_left and ID_right) or \
                 --left-calibration FILE and --right-calibration FILE"
            );
        }
        Ok(())
    }

    /// Refuses a profile named for an arm the daemon does not run, or with `--no-dynamics`.
    fn check_dynamics(&self) -> anyhow::Result<()> {
        let sided = self.pair_dynamics.iter().any(Option::is_some);
        if self.no_dynamics && (sided || self.dynamics.is_some()) {
            bail!("--no-dynamics loads no profile: leave out --dynamics, --left-dynamics and --right-dynamics");
        }
        if self.pair && self.dynamics.is_some() {
            bail!("--dynamics is one arm's; a pair takes --left-dynamics FILE and --right-dynamics FILE");
        }
        if !self.pair && sided {
            bail!("--left-dynamics and --right-dynamics are for a pair: give --pair (or its ports) too");
        }
        Ok(())
    }

    /// Refuses serving gRPC on `listen`, or the MCP endpoint, off loopback without TLS and a way
    /// to authenticate: one rule for both listeners.
    pub fn check_exposure(&self, listen: &ListenAddr) -> anyhow::Result<()> {
        let policy = self.auth_policy();
        check_exposure(listen, &policy)?;
        if let Some(addr) = self.mcp_listen {
            check_exposure(&addr.into(), &policy).context("the MCP endpoint (--mcp-listen)")?;
        }
        Ok(())
    }

    /// What callers must show, from the TLS and token settings.
    pub fn auth_policy(&self) -> AuthPolicy {
        AuthPolicy {
            tls: self.tls.is_some(),
            token: self.token.clone(),
            client_certs: self.tls.as_ref().is_some_and(|t| t.client_ca.is_some()),
        }
    }
}

fn tls_files(
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    client_ca: Option<PathBuf>,
) -> anyhow::Result<Option<TlsFiles>> {
    match (cert, key) {
        (Some(cert), Some(key)) => Ok(Some(TlsFiles { cert, key, client_ca })),
        (None, None) if client_ca.is_some() => bail!("--tls-client-ca needs --tls-cert and --tls-key"),
        (None, None) => Ok(None),
        (Some(_), None) => bail!("--tls-cert needs --tls-key (the certificate's private key)"),
        (None, Some(_)) => bail!("--tls-key needs --tls-cert (the certificate it belongs to)"),
    }
}

fn parse_lock_task(values: &[String]) -> anyhow::Result<TaskRef> {
    let [suite, task_index, init_state_index] = values else {
        bail!(
            "--lock-task takes 3 values (SUITE TASK_INDEX INIT_STATE_INDEX), got {}",
            values.len()
        );
    };
    let index = |name: &str, text: &str| {
        text.parse::<u32>()
            .with_context(|| format!("--lock-task {name} must be a whole number from 0, got {text:?}"))
    };
    Ok(TaskRef {
        suite: suite.clone(),
        task_index: index("TASK_INDEX", task_index)?,
        init_state_index: index("INIT_STATE_INDEX", init_state_index)?,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use clap::Parser;
    use std::io::Write;

    /// The daemon's command line without its subcommands.
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        daemon: DaemonOptions,
    }

    fn args(argv: &[&str]) -> DaemonOptions {
        let mut full = vec!["fakesim-hil"];
        full.extend_from_slice(argv);
        Cli::try_parse_from(full).unwrap().daemon
    }

    /// The daemon's settings from a command line, with `env` as the environment.
    fn from_cli(argv: &[&str], env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Settings> {
        let mut full = vec!["fakesim-hil"];
        full.extend_from_slice(argv);
        let cli = Cli::try_parse_from(full).unwrap();
        Settings::from_cli(&cli.daemon, env)
    }

    fn config_file(text: &str) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        file
    }

    /// The manual's example config file (the first TOML block after "A config file" on the
    /// configuration page).
    fn readme_config() -> String {
        let readme = include_str!("../../../../docs/src/configuration.md");
        let from = readme.find("A config file uses the flag names").unwrap();
        let block = &readme[from..];
        let start = block.find("```toml\n").unwrap() + "```toml\n".len();
        let end = start + block[start..].find("```").unwrap();
        block[start..end].to_owned()
    }

    #[test]
    fn the_readme_config_lists_every_daemon_flag_and_loads() {
        use clap::CommandFactory;
        let text = readme_config();
        let table: toml::Table = text.parse().unwrap();
        let mut documented: Vec<String> = table.keys().cloned().collect();
        documented.sort();
        let command = Cli::command();
        let mut flags: Vec<String> = command
            .get_arguments()
            .filter_map(|arg| arg.get_long().map(str::to_owned))
            .filter(|long| long != "config")
            .collect();
        flags.sort();
        assert_eq!(documented, flags, "manual config keys vs daemon flags");
        file::read(config_file(&text).path()).unwrap();
    }

    #[test]
    fn no_flags_give_the_defaults() {
        assert_eq!(Settings::from_args(&args(&[])).unwrap(), Settings::default());
        assert_eq!(Settings::default().listen.to_string(), "127.0.0.1:50051");
    }

    #[test]
    fn flags_are_parsed_including_lock_task() {
        let settings = Settings::from_args(&args(&[
            "--listen",
            "127.0.0.1:0",
            "--lock-task",
            "so101_tabletop",
            "2",
            "7",
            "--max-steps",
            "50",
            "--runs-dir",
            "/tmp/r",
            "--image-size",
            "128",
            "--render-quality",
            "fast",
            "--hil-rate-hz",
            "50",
            "--log-level",
            "debug",
        ]))
        .unwrap();
        assert_eq!(settings.listen, "127.0.0.1:0".parse().unwrap());
        assert_eq!(
            settings.lock_task,
            Some(TaskRef {
                suite: "so101_tabletop".into(),
                task_index: 2,
                init_state_index: 7
            })
        );
        assert_eq!((settings.max_steps, settings.image_size), (50, 128));
        assert_eq!(settings.render_quality, RenderQuality::Fast);
        assert_eq!(settings.hil_rate_hz, Some(50.0));
        assert_eq!(settings.runs_dir, PathBuf::from("/tmp/r"));
        assert_eq!(settings.log_level, "debug");
    }

    #[test]
    fn flags_override_the_file_and_the_file_overrides_defaults() {
        let file = config_file(
            "listen = \"127.0.0.1:6000\"\nmax-steps = 40\nimage-size = 64\nrender-quality = \"fast\"\n\
             [lock-task]\nsuite = \"s\"\ntask-index = 1\ninit-state-index = 3\n",
        );
        let path = file.path().to_str().unwrap();
        let settings = Settings::from_args(&args(&["--config", path, "--max-steps", "90"])).unwrap();
        assert_eq!(settings.max_steps, 90, "flag wins");
        assert_eq!(settings.listen.to_string(), "127.0.0.1:6000", "file wins over default");
        assert_eq!(settings.image_size, 64);
        assert_eq!(settings.render_quality, RenderQuality::Fast);
        assert_eq!(settings.lock_task.unwrap().init_state_index, 3);
        assert_eq!(
            settings.runs_dir,
            PathBuf::from("./runs"),
            "default when neither sets it"
        );
    }

    #[test]
    fn unknown_config_keys_are_refused_with_their_name() {
        let file = config_file("max-steps = 10\nmax_stepz = 5\n");
        let err = Settings::from_args(&args(&["--config", file.path().to_str().unwrap()])).unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("max_stepz"), "{text}");
        let nested = config_file("[lock-task]\nsuite = \"s\"\ntask-index = 1\ninit-state-index = 0\nseed = 4\n");
        let err = Settings::from_args(&args(&["--config", nested.path().to_str().unwrap()])).unwrap_err();
        assert!(format!("{err:#}").contains("seed"), "{err:#}");
    }

    #[test]
    fn backdrops_and_variations_come_from_the_file_or_flags_and_bad_ones_are_refused() {
        let file = config_file(
            "[backdrop]\nagentview = \"room.png\"\n[variations]\ncamera-shift-mm = 3.0\nlight-intensity = [0.8, 1.2]\n",
        );
        let path = file.path().to_str().unwrap();
        let settings = Settings::from_args(&args(&["--config", path])).unwrap();
        assert_eq!(
            settings.backdrops,
            vec!["agentview=room.png".parse::<CameraFile>().unwrap()]
        );
        assert_eq!(settings.variations.camera_shift_mm, Some(3.0));
        assert_eq!(settings.variations.light_intensity, Some([0.8, 1.2]));
        let flags = args(&[
            "--config",
            path,
            "--backdrop",
            "front=a.jpg",
            "--backdrop",
            "wrist=b.png",
        ]);
        let cameras: Vec<String> = (Settings::from_args(&flags).unwrap().backdrops.into_iter())
            .map(|b| b.camera)
            .collect();
        assert_eq!(cameras, ["front", "wrist"], "the flags win over the file's table");
        assert!(Settings::default().variations.is_off() && Settings::default().backdrops.is_empty());
        for (text, expected) in [
            (
                "[variations]\ncamera-shift-mm = 80.0\n",
                "camera-shift-mm must be from 0 to 50",
            ),
            ("[variations]\ncamera-shfit-mm = 1.0\n", "camera-shfit-mm"),
        ] {
            let bad = config_file(text);
            let err = Settings::from_args(&args(&["--config", bad.path().to_str().unwrap()])).unwrap_err();
            assert!(format!("{err:#}").contains(expected), "{err:#}");
        }
        let err = Settings::from_args(&args(&["--backdrop", "front=a.png", "--backdrop", "front=b.png"])).unwrap_err();
        assert!(format!("{err:#}").contains("two photos"), "{err:#}");
        assert!(Cli::try_parse_from(["fakesim-hil", "--backdrop", "front"]).is_err());
    }

    #[test]
    fn part_colours_come_from_a_flag_or_the_file_and_bad_ones_are_refused() {
        use fakesim_twin::Rgb;
        let file = config_file("printed-color = \"#112233\"\nservo-color = \"#445566\"\n");
        let path = file.path().to_str().unwrap();
        let settings = Settings::from_args(&args(&["--config", path, "--servo-color", "#A0b0C0"])).unwrap();
        assert_eq!(settings.part_colors.printed, Rgb([0x11, 0x22, 0x33]), "from the file");
        assert_eq!(settings.part_colors.servo, Rgb([0xa0, 0xb0, 0xc0]), "the flag wins");
        assert_eq!(Settings::default().part_colors, PartColors::default());
        let bad = config_file("servo-color = \"black\"\n");
        let err = Settings::from_args(&args(&["--config", bad.path().to_str().unwrap()])).unwrap_err();
        assert!(
            format!("{err:#}").contains("\"black\" is not a colour: write it as # and six hexadecimal digits"),
            "{err:#}"
        );
        let err = Cli::try_parse_from(["fakesim-hil", "--printed-color", "#12345"]).unwrap_err();
        assert!(err.to_string().contains("#rrggbb"), "{err}");
    }

    #[test]
    fn bad_values_are_refused() {
        let err = Settings::from_args(&args(&["--lock-task", "s", "one", "0"])).unwrap_err();
        assert!(
            format!("{err:#}").contains("TASK_INDEX must be a whole number"),
            "{err:#}"
        );
        assert!(Settings::from_args(&args(&["--max-steps", "0"])).is_err());
        assert!(Settings::from_args(&args(&["--image-size", "0"])).is_err());
        assert!(Settings::from_args(&args(&["--ramp-speed", "0"])).is_err());
        assert!(Cli::try_parse_from(["fakesim-hil", "--lock-task", "s", "1"]).is_err());
        assert!(Cli::try_parse_from(["fakesim-hil", "--listen", "nowhere"]).is_err());
        assert!(Cli::try_parse_from(["fakesim-hil", "--render-quality", "ultra"]).is_err());
        for hz in ["10", "150", "NaN"] {
            let err = Settings::from_args(&args(&["--hil-rate-hz", hz])).unwrap_err();
            assert!(
                format!("{err:#}").contains("hil-rate-hz must be from 20 to 100"),
                "{err:#}"
            );
        }
        for ms in ["1", "2000", "NaN"] {
            let err = Settings::from_args(&args(&["--reply-timeout", ms])).unwrap_err();
            assert!(
                format!("{err:#}").contains("reply-timeout must be from 5 to 1000 ms"),
                "{err:#}"
            );
        }
        let slow = Settings::from_args(&args(&["--reply-timeout", "250"])).unwrap();
        assert_eq!(slow.reply_timeout, Duration::from_millis(250));
        let file = config_file("render-quality = \"ultra\"\n");
        let err = Settings::from_args(&args(&["--config", file.path().to_str().unwrap()])).unwrap_err();
        assert!(format!("{err:#}").contains("fast, full"), "{err:#}");
    }

    #[test]
    fn servo_settings_come_from_the_config_file_and_the_calibration_flag_from_either() {
        let file = config_file(
            "port = \"/dev/ttyACM0\"\nrobot-id = \"arm\"\n[servos]\np = 12\n[servos.gripper]\nmax-torque = 400\n",
        );
        let path = file.path().to_str().unwrap();
        let settings = Settings::from_args(&args(&["--config", path])).unwrap();
        assert_eq!(settings.servos.p, 12);
        assert_eq!(settings.servos.d, ServoSettings::default().d);
        assert_eq!(settings.servos.gripper.max_torque, 400);
        assert!(!settings.write_calibration_to_servos);
        let flagged = Settings::from_args(&args(&["--config", path, "--write-calibration-to-servos"])).unwrap();
        assert!(flagged.write_calibration_to_servos);
        let typo = config_file("[servos]\nkp = 12\n");
        let err = Settings::from_args(&args(&["--config", typo.path().to_str().unwrap()])).unwrap_err();
        assert!(format!("{err:#}").contains("kp"), "{err:#}");
    }

    #[test]
    fn the_mcp_endpoint_follows_the_grpc_exposure_rule() {
        let err = from_cli(&["--mcp-listen", "0.0.0.0:8080"], |_| None).unwrap_err();
        let text = format!("{err:#}");
        assert!(
            text.contains("the MCP endpoint (--mcp-listen): refusing to listen on 0.0.0.0:8080 without TLS")
                && text.contains("--tls-cert FILE --tls-key FILE"),
            "{text}"
        );
        let settings = Settings::from_args(&args(&["--mcp-listen", "[::1]:0", "--mcp-observe-only"])).unwrap();
        assert!(settings.mcp_listen.unwrap().ip().is_loopback() && settings.mcp_observe_only);
        let token = config_file("0123456789abcdef0123\n");
        let token = token.path().to_str().unwrap();
        let on_loopback = ["--mcp-listen", "127.0.0.1:0", "--token-file", token];
        assert!(from_cli(&on_loopback, |_| None).unwrap().token.is_some());
        let tls_only = [
            "--mcp-listen",
            "0.0.0.0:8080",
            "--tls-cert",
            "/c.pem",
            "--tls-key",
            "/k.pem",
        ];
        let err = from_cli(&tls_only, |_| None).unwrap_err();
        assert!(format!("{err:#}").contains("without authentication"), "{err:#}");
        let full = [&tls_only[..], &["--token-file", token]].concat();
        assert_eq!(
            from_cli(&full, |_| None).unwrap().mcp_listen,
            Some("0.0.0.0:8080".parse().unwrap())
        );
    }

    #[test]
    fn access_settings_come_from_flags_file_and_environment() {
        let token = config_file("lab-token-0123456789abcdef\n");
        let token_path = token.path().to_str().unwrap();
        let file = config_file(&format!(
            "tls-cert = \"/c.pem\"\ntls-key = \"/k.pem\"\ntls-client-ca = \"/ca.pem\"\n\
             token-file = \"{token_path}\"\nlease-in-sim = true\n"
        ));
        let settings = from_cli(&["--config", file.path().to_str().unwrap()], |_| None).unwrap();
        let tls = settings.tls.clone().unwrap();
        assert_eq!(
            (tls.cert, tls.client_ca),
            (PathBuf::from("/c.pem"), Some(PathBuf::from("/ca.pem")))
        );
        assert!(settings.lease_in_sim);
        let policy = settings.auth_policy();
        assert!(policy.tls && policy.client_certs);
        assert!(policy.token.unwrap().matches(b"lab-token-0123456789abcdef"));

        let env = |name: &str| (name == TOKEN_ENV).then(|| "from-the-environment-42".to_owned());
        let settings = from_cli(&[], env).unwrap();
        assert!(settings.token.unwrap().matches(b"from-the-environment-42"));
        let settings = from_cli(&["--token-file", token_path], env).unwrap();
        assert!(
            settings.token.unwrap().matches(b"lab-token-0123456789abcdef"),
            "the file wins"
        );

        for (argv, says) in [
            (&["--tls-cert", "/c.pem"][..], "--tls-cert needs --tls-key"),
            (&["--tls-key", "/k.pem"][..], "--tls-key needs --tls-cert"),
            (&["--tls-client-ca", "/ca.pem"][..], "--tls-client-ca needs --tls-cert"),
            (&["--listen", "0.0.0.0:1"][..], "without TLS"),
        ] {
            let err = from_cli(argv, |_| None).unwrap_err();
            assert!(format!("{err:#}").contains(says), "{argv:?}: {err:#}");
        }
    }

    #[test]
    fn shadow_thresholds_come_from_flags_over_the_file_and_are_checked() {
        let file = config_file("shadow-load = 40\nshadow-ticks = 4\n");
        let path = file.path().to_str().unwrap();
        let settings = Settings::from_args(&args(&[
            "--config",
            path,
            "--shadow-ticks",
            "6",
            "--shadow-residual",
            "0.08",
        ]))
        .unwrap();
        let expected = ShadowConfig {
            residual_rad: 0.08,
            load_percent: 40.0,
            ticks: 6,
            ..ShadowConfig::default()
        };
        assert_eq!(settings.shadow, expected);
        for (flag, value) in [
            ("--shadow-load", "150"),
            ("--shadow-drift", "0.5"),
            ("--shadow-ticks", "0"),
        ] {
            let err = Settings::from_args(&args(&[flag, value])).unwrap_err();
            assert!(format!("{err:#}").starts_with(&flag[2..]), "{flag}: {err:#}");
        }
    }

    #[test]
    fn the_live_view_target_comes_from_the_flag_over_the_file_and_serves_loopback_only() {
        use fakesim_live_view::Target;
        let file = config_file("live-view = \"save=from-file.rrd\"\n");
        let path = file.path().to_str().unwrap();
        let settings = Settings::from_args(&args(&["--config", path])).unwrap();
        assert_eq!(settings.live_view, Some(Target::Save("from-file.rrd".into())));
        let settings =
            Settings::from_args(&args(&["--config", path, "--live-view", "serve=127.0.0.1:0,9999"])).unwrap();
        assert_eq!(
            settings.live_view,
            Some(Target::Serve {
                web: "127.0.0.1:0".parse().unwrap(),
                grpc_port: 9999
            })
        );
        let err = Cli::try_parse_from(["fakesim-hil", "--live-view", "serve=0.0.0.0:9090"]).unwrap_err();
        assert!(err.to_string().contains("loopback only"), "{err}");
        let off_loopback = config_file("live-view = \"serve=[::]:9090\"\n");
        let err = Settings::from_args(&args(&["--config", off_loopback.path().to_str().unwrap()])).unwrap_err();
        assert!(format!("{err:#}").contains("no TLS and no authentication"), "{err:#}");
    }

    #[test]
    fn missing_config_file_names_the_path() {
        let err = Settings::from_args(&args(&["--config", "/nonexistent/fakesim.toml"])).unwrap_err();
        assert!(format!("{err:#}").contains("/nonexistent/fakesim.toml"), "{err:#}");
    }
}
