//! Compiles the fakesim.v1 protos with protox (pure Rust, no system protoc),
//! generates tonic servers and clients, and writes the encoded descriptor set
//! for gRPC reflection.

use std::error::Error;
use std::path::PathBuf;

/// Proto files of the API, relative to the crate root (which is the include root).
const PROTO_FILES: &[&str] = &[
    "fakesim/v1/common.proto",
    "fakesim/v1/session.proto",
    "fakesim/v1/robot.proto",
    "fakesim/v1/hardware.proto",
    "fakesim/v1/preview.proto",
];

/// Name of the descriptor set file in OUT_DIR, read back by `lib.rs`.
const DESCRIPTOR_FILE: &str = "fakesim_descriptor.bin";

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed=fakesim");
    for file in PROTO_FILES {
        println!("cargo:rerun-if-changed={file}");
    }

    let mut compiler = protox::Compiler::new(["."])?;
    compiler.include_imports(true).include_source_info(true);
    compiler.open_files(PROTO_FILES)?;

    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out_dir.join(DESCRIPTOR_FILE), compiler.encode_file_descriptor_set())?;

    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(compiler.file_descriptor_set())?;
    Ok(())
}
