//! What the tests of the real binary share: starting it, and reading its log for a line.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStderr, Command, Stdio};

/// The binary with the given arguments, without `LD_LIBRARY_PATH` so only its rpath can find
/// libmujoco.
pub fn daemon(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fakesim-hil"));
    command
        .args(args)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("RUST_LOG")
        .stderr(Stdio::piped());
    command
}

/// Reads stderr up to the first line containing `marker` and returns what follows the marker
/// on that line; fails with the log so far if the process ends first.
pub fn after_marker(stderr: &mut BufReader<ChildStderr>, child: &mut Child, marker: &str) -> String {
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!(
                "the daemon ended ({:?}) before {marker:?}; stderr:\n{seen}",
                child.wait()
            );
        }
        if let Some((_, rest)) = line.trim_end().split_once(marker) {
            return rest.to_owned();
        }
        seen.push_str(&line);
    }
}

/// Runs the binary with `args` (and no token in the environment), checks that it refused to
/// start (exit code 1), and returns its stderr.
pub fn refused_at_start(args: &[&str]) -> String {
    let output = daemon(args).env_remove("FAKESIM_HIL_TOKEN").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    stderr
}
