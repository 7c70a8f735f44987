//! The MuJoCo shared library this workspace links against, fetched at build time.
//!
//! Depending on this crate is what makes `libmujoco.so.3.17.0` available to the linker
//! and, through cargo, to `cargo run` and `cargo test`.

/// MuJoCo version the workspace is pinned to (must match mujoco-rs).
pub const MUJOCO_VERSION: &str = "3.17.0";

/// Directory that held `libmujoco.so` when this crate was built.
pub const LIBRARY_DIR: &str = env!("FAKESIM_MUJOCO_LIBDIR");
