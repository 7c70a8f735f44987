//! Who may call the daemon and move the arm: the bearer token and TLS checked on every call,
//! the control lease, and the audit of both.

pub mod audit;
pub mod auth;
pub mod lease;
pub mod tls;
