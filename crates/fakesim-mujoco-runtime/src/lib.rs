//! The MuJoCo shared library this workspace links against, fetched at build time.
//!
//! Depending on this crate is what makes `libmujoco.so.3.17.0` available to the linker
//! and, through cargo, to `cargo run` and `cargo test`.

/// MuJoCo version the workspace is pinned to (must match mujoco-rs).
pub const MUJOCO_VERSION: &str = "3.17.0";

/// File name (and SONAME) of the library a binary of this workspace needs at run time.
pub const LIBRARY_FILE: &str = "libmujoco.so.3.17.0";

/// Directory that held `libmujoco.so` when this crate was built (in the build directory).
pub const LIBRARY_DIR: &str = env!("FAKESIM_MUJOCO_LIBDIR");

/// Directory holding a copy of the library that outlives the build directory: the per-user
/// cache the build script filled (or `MUJOCO_DYNAMIC_LINK_DIR`, when the build was given one).
pub const KEPT_LIBRARY_DIR: &str = env!("FAKESIM_MUJOCO_KEPT_LIBDIR");
