//! The fakesim-hil daemon as a library, so tests can run the real server in-process:
//! [`serve`] on a bound listener with the resolved [`Settings`]; [`AppState`] is what the
//! services share.
//!
//! Rooms, each one concern, each depending only on those above it:
//! - `access`: who may call and move the arm (bearer token, TLS, the control lease, the audit);
//! - [`config`]: the options (flags and config-file keys, defined once) and the settings;
//! - `wire`: the API's vocabulary (the error table, message conversions, joint units, frames);
//! - `state`: what the services share, and what it starts (the bridge to the arm, the live view);
//! - `controller`: the one way a request moves the twin or the arm;
//! - `services`: the gRPC services (robot, session, hardware, preview);
//! - `transport`: the gRPC server, listeners, the MCP endpoints, signals and logging.
//!
//! The library needs neither the emulator nor the hardware tools: those are the binary's, for
//! its subcommands.

mod access;
pub mod config;
mod controller;
mod services;
mod state;
mod transport;
mod wire;

pub use access::auth::BearerToken;
pub use access::lease::{LEASE_HEADER, MAX_TTL_MS};
pub use access::tls::TlsFiles;
pub use config::{ListenAddr, Settings};
pub use controller::{Call, Need};
pub use fakesim_bridge::hil::Mode;
pub use state::AppState;
pub use transport::listen::Listener;
pub use transport::logging;
pub use transport::mcp_stdio::{McpArgs, run as mcp_stdio};
pub use transport::server::{run, serve};
pub use wire::status;
