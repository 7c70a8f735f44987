//! `fakesim-hil`, the command users run: finds libmujoco 3.17.0, then replaces itself with the
//! daemon binary beside it (`fakesim-hil-daemon`, same arguments, same process id), the
//! library's directory first on `LD_LIBRARY_PATH`. Without a library it says where it looked
//! and which command provides one, instead of the loader's message.
//!
//! The daemon links libmujoco, so the loader must find the library before any of the daemon's
//! code runs; this launcher links nothing of MuJoCo and runs wherever it is installed.

mod library;

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// File name of the daemon binary, looked for beside the launcher.
const DAEMON: &str = "fakesim-hil-daemon";

fn main() -> ExitCode {
    let exe = match std::env::current_exe().and_then(|exe| exe.canonicalize()) {
        Ok(exe) => exe,
        Err(error) => return fail(&format!("cannot tell where this fakesim-hil is installed: {error}")),
    };
    let bin_dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
    let daemon = bin_dir.join(DAEMON);
    if !daemon.is_file() {
        return fail(&format!(
            "{} is missing: install fakesim-hil again (`pip install fakesim-hil` or \
             `cargo install --path crates/fakesim-hil`), which puts both binaries side by side",
            daemon.display()
        ));
    }
    let found = library::find(&bin_dir);
    let Some(dir) = found.dir else {
        return fail(&library::missing_message(&found.looked_in));
    };
    let error = Command::new(&daemon)
        .arg0("fakesim-hil")
        .args(std::env::args_os().skip(1))
        .env("LD_LIBRARY_PATH", library_path(&dir))
        .exec();
    fail(&format!("cannot start {}: {error}", daemon.display()))
}

/// `dir`, then the `LD_LIBRARY_PATH` this process was given.
fn library_path(dir: &Path) -> OsString {
    let mut paths = vec![PathBuf::from(dir)];
    if let Some(given) = std::env::var_os("LD_LIBRARY_PATH") {
        paths.extend(std::env::split_paths(&given));
    }
    std::env::join_paths(paths).unwrap_or_else(|_| dir.as_os_str().to_owned())
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}
