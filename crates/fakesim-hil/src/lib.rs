//! The fakesim-hil daemon as a library, so tests can run the real server in-process:
//! [`serve`] on a bound listener with the resolved [`Settings`]; [`AppState`] is what the
//! services share.

pub mod audit;
pub mod auth;
pub mod cli;
pub mod controller;
pub mod convert;
pub mod hardware;
pub mod hardware_service;
pub mod lease;
pub mod listen;
pub mod live_view;
pub mod logging;
pub mod mcp;
pub mod mcp_http;
pub mod period;
pub mod preview_service;
pub mod robot_service;
pub mod server;
pub mod session_service;
pub mod settings;
pub mod signal;
pub mod state;
pub mod status;
pub mod tick;
pub mod tls;
pub mod units;

pub use server::{run, serve};
pub use settings::Settings;
pub use state::AppState;
