//! Blocking unary gRPC calls to a fakesim-hil daemon, for a caller that is not async (the Python
//! client's hot calls, through its `fakesim_hil._native` extension).
//!
//! Each calling thread has a connection of its own (a tonic channel on a current-thread tokio
//! runtime) and drives it itself while its call runs, so an answer wakes the thread that waits
//! for it and no other. Between calls a background thread gives every idle connection a moment
//! four times a second, so that the daemon's pings and shutdown are answered.

mod codec;
mod dial;
mod links;
pub mod target;

pub use links::Calls;
pub use target::Target;
pub use tonic::{Code, Status};

/// The TLS settings of a daemon that serves TLS, in PEM.
#[derive(Debug, Clone, Default)]
pub struct Tls {
    /// The certificate authority the daemon's certificate is checked against.
    pub ca_pem: Vec<u8>,
    /// The client's certificate chain and key, when the daemon asks for one.
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
}

/// Why calls to a target cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A target form this crate cannot honour (grpcio can take it instead).
    #[error("target {0:?} is not one this client dials")]
    Unsupported(String),
    /// The target or the TLS settings were refused by the transport.
    #[error("cannot call {target:?}: {source}")]
    Transport {
        /// The target as given.
        target: String,
        /// What the transport said.
        source: tonic::transport::Error,
    },
}
