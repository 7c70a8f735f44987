//! Where the launcher looks for `libmujoco.so.3.17.0`, in order, and what it says when no
//! place has it.

use fakesim_mujoco_runtime::{KEPT_LIBRARY_DIR, LIBRARY_DIR, LIBRARY_FILE, MUJOCO_VERSION};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Environment variable naming a directory that holds the library (checked first).
const DIR_ENV: &str = "MUJOCO_DYNAMIC_LINK_DIR";

/// Python code printing the directory of the `mujoco` package, without importing it.
const FIND_MUJOCO: &str = "import importlib.util as u; s = u.find_spec('mujoco'); \
                           print(s.submodule_search_locations[0] if s else '')";

/// The directory found, if any, and every place looked in (for the message when none).
pub struct Found {
    /// The first directory holding the library.
    pub dir: Option<PathBuf>,
    /// Each place looked in, in order, described for a person.
    pub looked_in: Vec<String>,
}

/// Looks for the library for a launcher installed in `bin_dir`: `$MUJOCO_DYNAMIC_LINK_DIR`;
/// beside the launcher; `../lib`; the `mujoco` package of the Python environment the launcher
/// belongs to (a wheel puts it in `<env>/bin`, the package in `<env>/lib/pythonX.Y/site-packages`);
/// the copy the build kept in the user's cache; the build directory; the `mujoco` package
/// `python3` on PATH imports.
pub fn find(bin_dir: &Path) -> Found {
    let mut looked_in = Vec::new();
    let mut candidates: Vec<(PathBuf, String)> = Vec::new();
    if let Some(dir) = std::env::var_os(DIR_ENV) {
        candidates.push((PathBuf::from(dir), format!("${DIR_ENV}")));
    }
    candidates.push((bin_dir.to_path_buf(), "beside fakesim-hil".to_owned()));
    let prefix = bin_dir.parent().unwrap_or(bin_dir);
    candidates.push((prefix.join("lib"), "../lib".to_owned()));
    for site in python_site_dirs(prefix) {
        candidates.push((
            site.join("mujoco"),
            "this Python environment's mujoco package".to_owned(),
        ));
    }
    candidates.push((PathBuf::from(KEPT_LIBRARY_DIR), "the build's cache".to_owned()));
    candidates.push((PathBuf::from(LIBRARY_DIR), "the build directory".to_owned()));
    for (dir, why) in candidates {
        if holds_library(&dir) {
            return Found {
                dir: Some(dir),
                looked_in,
            };
        }
        looked_in.push(format!("{} ({why})", dir.display()));
    }
    match python_mujoco() {
        Some(dir) if holds_library(&dir) => Found {
            dir: Some(dir),
            looked_in,
        },
        Some(dir) => {
            looked_in.push(format!("{} (python3's mujoco package, another version)", dir.display()));
            Found { dir: None, looked_in }
        }
        None => {
            looked_in.push("python3 on PATH (no mujoco package)".to_owned());
            Found { dir: None, looked_in }
        }
    }
}

/// What the launcher prints when no place holds the library: where it looked, and the commands
/// that provide it.
pub fn missing_message(looked_in: &[String]) -> String {
    let places: String = looked_in.iter().map(|place| format!("\n  {place}")).collect();
    format!(
        "MuJoCo's {LIBRARY_FILE} was not found; fakesim-hil looked in:{places}\n\
         Provide it with one of:\n  \
         python3 -m pip install mujoco=={MUJOCO_VERSION}   (then fakesim-hil finds it through python3)\n  \
         cp /path/to/{LIBRARY_FILE} {}   (beside this binary)\n  \
         {DIR_ENV}=/dir/holding/it fakesim-hil ...",
        std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf))
            .unwrap_or_default()
            .display()
    )
}

fn holds_library(dir: &Path) -> bool {
    dir.join(LIBRARY_FILE).is_file()
}

/// `prefix/lib/python3.*/{site,dist}-packages`, the ones that exist.
fn python_site_dirs(prefix: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("python3"))
        .flat_map(|entry| ["site-packages", "dist-packages"].map(|name| entry.path().join(name)))
        .filter(|dir| dir.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// The directory of the `mujoco` package `python3` on PATH would import, if it has one.
fn python_mujoco() -> Option<PathBuf> {
    let output = Command::new("python3")
        .args(["-c", FIND_MUJOCO])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let dir = String::from_utf8(output.stdout).ok()?;
    let dir = dir.trim();
    (output.status.success() && !dir.is_empty()).then(|| PathBuf::from(dir))
}
