//! Embeds run paths relative to the binary in `fakesim-hil-daemon`, so it finds libmujoco
//! beside itself (`$ORIGIN`) or in `../lib` (`cargo install --root DIR` puts binaries in
//! `DIR/bin`) without `LD_LIBRARY_PATH`. No absolute path into the build directory: the
//! `fakesim-hil` launcher finds the library everywhere else (see src/launcher/) and gives the
//! daemon its directory.

fn main() {
    println!("cargo::rustc-link-arg-bins=-Wl,-rpath,$ORIGIN:$ORIGIN/../lib");
}
