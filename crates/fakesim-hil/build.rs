//! Embeds run paths in the `fakesim-hil` binary so it finds libmujoco without
//! `LD_LIBRARY_PATH`: `$ORIGIN` (a library installed beside the binary) and the
//! directory `fakesim-mujoco-runtime` provided at build time.

use std::process::ExitCode;

fn main() -> ExitCode {
    println!("cargo::rerun-if-env-changed=DEP_FAKESIM_MUJOCO_LIBDIR");
    println!("cargo::rustc-link-arg-bins=-Wl,-rpath,$ORIGIN");
    match std::env::var("DEP_FAKESIM_MUJOCO_LIBDIR") {
        Ok(dir) => {
            println!("cargo::rustc-link-arg-bins=-Wl,-rpath,{dir}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "error: DEP_FAKESIM_MUJOCO_LIBDIR is not available ({e}); \
                 fakesim-hil must depend directly on fakesim-mujoco-runtime"
            );
            ExitCode::FAILURE
        }
    }
}
