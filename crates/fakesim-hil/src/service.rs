//! `fakesim-hil install-service`: the udev rules of the servo bus adapters and a systemd unit
//! that serves one arm after every boot (`Type=notify`, restarted on failure).

use anyhow::Context;
use clap::Args;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The udev rules shipped in the repository's `udev/` folder.
const UDEV_RULES: &str = include_str!("../udev/99-fakesim-hil-so101.rules");
/// The file name the rules are installed under.
const UDEV_RULES_FILE: &str = "99-fakesim-hil-so101.rules";
/// Longest robot id accepted (it names the unit).
const MAX_ROBOT_ID: usize = 64;

/// Options of `install-service`.
#[derive(Debug, Args)]
pub struct InstallServiceArgs {
    /// The arm's LeRobot id (its calibration file's name); the unit is fakesim-hil-ID.service.
    #[arg(long)]
    robot_id: String,
    /// The arm's serial port, e.g. /dev/ttyACM0 or a udev symlink such as /dev/so101_follower.
    #[arg(long)]
    port: String,
    /// Address the service listens on.
    #[arg(long, default_value = "127.0.0.1:50051")]
    listen: String,
    /// User the service runs as (whose LeRobot calibration files it reads); root if not given.
    #[arg(long)]
    user: Option<String>,
    /// Directory the unit is written to.
    #[arg(long, default_value = "/etc/systemd/system")]
    unit_dir: PathBuf,
    /// Directory the udev rules are written to.
    #[arg(long, default_value = "/etc/udev/rules.d")]
    udev_dir: PathBuf,
    /// More daemon options for the unit's command line, after `--` (e.g. -- --mode hil).
    #[arg(last = true)]
    daemon_args: Vec<String>,
}

/// Writes the unit and the udev rules, then prints the commands that load them.
pub fn run(args: &InstallServiceArgs) -> anyhow::Result<()> {
    check_robot_id(&args.robot_id)?;
    let launcher = launcher()?;
    let unit_name = format!("fakesim-hil-{}.service", args.robot_id);
    let unit_path = args.unit_dir.join(&unit_name);
    write(&unit_path, &unit(args, &launcher))?;
    let rules_path = args.udev_dir.join(UDEV_RULES_FILE);
    write(&rules_path, UDEV_RULES)?;
    println!("wrote {}\nwrote {}", unit_path.display(), rules_path.display());
    println!("load them (as root):");
    println!("  udevadm control --reload-rules && udevadm trigger");
    println!("  systemctl daemon-reload && systemctl enable --now {unit_name}");
    println!("then: systemctl status {unit_name}; journalctl -u {unit_name}");
    Ok(())
}

/// The unit's text: the launcher beside this binary serving the arm, ready when listening.
fn unit(args: &InstallServiceArgs, launcher: &Path) -> String {
    let mut command = vec![launcher.display().to_string()];
    for (flag, value) in [
        ("--port", &args.port),
        ("--robot-id", &args.robot_id),
        ("--listen", &args.listen),
    ] {
        command.extend([flag.to_owned(), value.clone()]);
    }
    command.extend(args.daemon_args.iter().cloned());
    let exec: Vec<String> = command.iter().map(|arg| quote(arg)).collect();
    let mut text = format!(
        "# Written by `fakesim-hil install-service`: the SO-101 arm {id} on {port} and its twin.\n\
         [Unit]\n\
         Description=fakesim-hil for the arm {id} on {port}\n\
         After=network.target\n\
         # Keep retrying while the arm is unplugged or powered off.\n\
         StartLimitIntervalSec=0\n\
         \n\
         [Service]\n\
         Type=notify\n\
         ExecStart={exec}\n\
         Restart=on-failure\n\
         RestartSec=5\n\
         TimeoutStartSec=120\n\
         TimeoutStopSec=30\n",
        id = escape_specifiers(&args.robot_id),
        port = escape_specifiers(&args.port),
        exec = exec.join(" "),
    );
    if let Some(user) = &args.user {
        // Writing to a String cannot fail.
        let _ = writeln!(text, "User={}\nSupplementaryGroups=dialout", escape_specifiers(user));
    }
    text.push_str("\n[Install]\nWantedBy=multi-user.target\n");
    text
}

/// One ExecStart argument in double quotes, with systemd's escapes for `\`, `"`, `%` and `$`.
fn quote(arg: &str) -> String {
    let escaped = arg.replace('\\', "\\\\").replace('"', "\\\"").replace('$', "$$");
    format!("\"{}\"", escape_specifiers(&escaped))
}

/// `%` doubled, as systemd expands `%x` specifiers in most settings.
fn escape_specifiers(text: &str) -> String {
    text.replace('%', "%%")
}

/// Robot ids name the unit: letters, digits, `_`, `-` and `.` only, at most 64.
fn check_robot_id(id: &str) -> anyhow::Result<()> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if id.is_empty() || id.len() > MAX_ROBOT_ID || !id.chars().all(allowed) {
        anyhow::bail!(
            "robot id {:?} cannot name a unit: use 1 to {MAX_ROBOT_ID} letters, digits, '_', '-' or '.'",
            id.chars().take(MAX_ROBOT_ID + 1).collect::<String>()
        );
    }
    Ok(())
}

/// The `fakesim-hil` launcher installed beside this binary (it finds libmujoco at start).
fn launcher() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()
        .and_then(|exe| exe.canonicalize())
        .context("cannot tell where fakesim-hil is installed")?;
    let launcher = exe.with_file_name("fakesim-hil");
    anyhow::ensure!(launcher.is_file(), "no launcher at {}", launcher.display());
    Ok(launcher)
}

fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
