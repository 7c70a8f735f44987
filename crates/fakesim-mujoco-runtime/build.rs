//! Provides libmujoco 3.17.0 for linking and running.
//!
//! With `MUJOCO_DYNAMIC_LINK_DIR` set, that directory is used as it is. Otherwise the
//! pinned `mujoco==3.17.0` wheel is fetched from PyPI with pip into a per-user cache (reused
//! by every later build, of any checkout or target directory), its sha256 is checked, and
//! `libmujoco.so.3.17.0` is unpacked into `OUT_DIR/lib` and into the cache's `lib`. `OUT_DIR/lib`
//! is announced as a native search path (cargo puts it on the library path of `cargo run` and
//! `cargo test`); the cache's `lib` outlives the build directory, so an installed binary's
//! launcher can find the library there after `cargo install` deleted its target directory.

use sha2::{Digest, Sha256};
use std::env;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const VERSION: &str = "3.17.0";
const LIBRARY: &str = "libmujoco.so.3.17.0";

/// One pinned wheel per CPU architecture: pip platform tag and the wheel's sha256.
struct PinnedWheel {
    arch: &'static str,
    platform: &'static str,
    sha256: &'static str,
}

const WHEELS: &[PinnedWheel] = &[
    PinnedWheel {
        arch: "x86_64",
        platform: "manylinux_2_28_x86_64",
        sha256: "d66928d86a2d1b601bbaa4dc11db50214d17d5301bb8afd84721313b67ff0874",
    },
    PinnedWheel {
        arch: "aarch64",
        platform: "manylinux_2_28_aarch64",
        sha256: "91a70ed9979c383ff1f5c03f25cc2e1280a8254c1a8e558d5dd7f4184f01efc9",
    },
];

fn main() -> ExitCode {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=MUJOCO_DYNAMIC_LINK_DIR");
    println!("cargo::rerun-if-env-changed=FAKESIM_MUJOCO_WHEEL");
    println!("cargo::rerun-if-env-changed=PYTHON");
    println!("cargo::rerun-if-env-changed=FAKESIM_MUJOCO_CACHE");
    match provide_library() {
        Ok(Provided { dir, kept }) => {
            println!("cargo::rustc-link-search=native={}", dir.display());
            println!("cargo::rustc-env=FAKESIM_MUJOCO_LIBDIR={}", dir.display());
            println!("cargo::rustc-env=FAKESIM_MUJOCO_KEPT_LIBDIR={}", kept.display());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: could not provide MuJoCo {VERSION}: {message}");
            eprintln!(
                "hint: install Python 3 with pip and network access to PyPI, or set \
                 MUJOCO_DYNAMIC_LINK_DIR to an absolute directory holding libmujoco.so ({VERSION}), \
                 or set FAKESIM_MUJOCO_WHEEL to a downloaded mujoco=={VERSION} wheel"
            );
            ExitCode::FAILURE
        }
    }
}

/// Where the library is for linking (`dir`), and where a copy stays after the build
/// directory is gone (`kept`).
struct Provided {
    dir: PathBuf,
    kept: PathBuf,
}

fn provide_library() -> Result<Provided, String> {
    if let Some(dir) = env::var_os("MUJOCO_DYNAMIC_LINK_DIR") {
        let dir = PathBuf::from(dir);
        if !dir.join("libmujoco.so").is_file() {
            return Err(format!(
                "MUJOCO_DYNAMIC_LINK_DIR={} holds no libmujoco.so",
                dir.display()
            ));
        }
        return Ok(Provided { kept: dir.clone(), dir });
    }
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    let lib_dir = out_dir.join("lib");
    let arch = env::var("CARGO_CFG_TARGET_ARCH").map_err(|e| e.to_string())?;
    let cache = cache_dir(&arch).unwrap_or_else(|| out_dir.clone());
    let kept = cache.join("lib");
    let unpacked = |dir: &Path| dir.join(LIBRARY).is_file() && dir.join("libmujoco.so").exists();
    if unpacked(&lib_dir) && unpacked(&kept) {
        return Ok(Provided { dir: lib_dir, kept });
    }
    let pinned = WHEELS
        .iter()
        .find(|w| w.arch == arch)
        .ok_or_else(|| format!("no pinned MuJoCo wheel for architecture {arch}"))?;
    let wheel = match env::var_os("FAKESIM_MUJOCO_WHEEL") {
        Some(path) => PathBuf::from(path),
        None => cached_wheel(pinned, &cache.join("wheel"))?,
    };
    verify_sha256(&wheel, pinned.sha256)?;
    unpack_library(&wheel, &lib_dir)?;
    if let Err(message) = unpack_library(&wheel, &kept) {
        println!("cargo::warning=keeping no copy of {LIBRARY} outside the build directory: {message}");
        return Ok(Provided {
            kept: lib_dir.clone(),
            dir: lib_dir,
        });
    }
    Ok(Provided { dir: lib_dir, kept })
}

/// The per-user cache of the pinned wheel and its library: `$FAKESIM_MUJOCO_CACHE`, else
/// `$XDG_CACHE_HOME/fakesim-hil/mujoco-3.17.0-ARCH`, else under `$HOME/.cache`; `None` without
/// either (the build then keeps nothing outside `OUT_DIR`).
fn cache_dir(arch: &str) -> Option<PathBuf> {
    if let Some(dir) = env::var_os("FAKESIM_MUJOCO_CACHE") {
        return Some(PathBuf::from(dir));
    }
    let base = env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))?;
    Some(base.join("fakesim-hil").join(format!("mujoco-{VERSION}-{arch}")))
}

/// The pinned wheel in `into`: the one already there if its sha256 matches, else downloaded.
fn cached_wheel(pinned: &PinnedWheel, into: &Path) -> Result<PathBuf, String> {
    if let Some(wheel) = find_wheel(into)
        && verify_sha256(&wheel, pinned.sha256).is_ok()
    {
        return Ok(wheel);
    }
    download_wheel(pinned, into)
}

/// The first `mujoco-*.whl` in `dir`, if any.
fn find_wheel(dir: &Path) -> Option<PathBuf> {
    fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with("mujoco-") && name.ends_with(".whl"))
        })
}

fn download_wheel(pinned: &PinnedWheel, into: &Path) -> Result<PathBuf, String> {
    fs::create_dir_all(into).map_err(|e| format!("creating {}: {e}", into.display()))?;
    let python = env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let status = Command::new(&python)
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args(["--python-version", "3.11", "--implementation", "cp", "--abi", "cp311"])
        .args(["--platform", pinned.platform, "--dest"])
        .arg(into)
        .arg(format!("mujoco=={VERSION}"))
        .status()
        .map_err(|e| format!("running `{python} -m pip download`: {e}"))?;
    if !status.success() {
        return Err(format!(
            "`{python} -m pip download mujoco=={VERSION}` failed ({status})"
        ));
    }
    find_wheel(into).ok_or_else(|| format!("pip left no mujoco wheel in {}", into.display()))
}

fn verify_sha256(wheel: &Path, expected: &str) -> Result<(), String> {
    let bytes = fs::read(wheel).map_err(|e| format!("reading {}: {e}", wheel.display()))?;
    let actual: String = Sha256::digest(&bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    if actual != expected {
        return Err(format!("{} has sha256 {actual}, expected {expected}", wheel.display()));
    }
    Ok(())
}

fn unpack_library(wheel: &Path, lib_dir: &Path) -> Result<(), String> {
    let file = fs::File::open(wheel).map_err(|e| format!("opening {}: {e}", wheel.display()))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| format!("reading wheel: {e}"))?;
    let mut entry = archive
        .by_name(&format!("mujoco/{LIBRARY}"))
        .map_err(|e| format!("wheel has no mujoco/{LIBRARY}: {e}"))?;
    let mut bytes = Vec::with_capacity(usize::try_from(entry.size()).unwrap_or(0));
    entry
        .read_to_end(&mut bytes)
        .map_err(|e| format!("unpacking {LIBRARY}: {e}"))?;
    fs::create_dir_all(lib_dir).map_err(|e| format!("creating {}: {e}", lib_dir.display()))?;
    // Named per process: two builds (two target directories) may fill the shared cache at once.
    let partial = lib_dir.join(format!("{LIBRARY}.partial-{}", std::process::id()));
    fs::write(&partial, &bytes).map_err(|e| format!("writing {}: {e}", partial.display()))?;
    fs::rename(&partial, lib_dir.join(LIBRARY)).map_err(|e| format!("installing {LIBRARY}: {e}"))?;
    let link = lib_dir.join("libmujoco.so");
    let partial_link = lib_dir.join(format!("libmujoco.so.partial-{}", std::process::id()));
    if partial_link.symlink_metadata().is_ok() {
        fs::remove_file(&partial_link).map_err(|e| format!("replacing {}: {e}", partial_link.display()))?;
    }
    std::os::unix::fs::symlink(LIBRARY, &partial_link)
        .map_err(|e| format!("linking {}: {e}", partial_link.display()))?;
    fs::rename(&partial_link, &link).map_err(|e| format!("linking {}: {e}", link.display()))
}
