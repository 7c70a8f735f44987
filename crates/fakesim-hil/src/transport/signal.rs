//! The process signals that stop the daemon gracefully.

use anyhow::Context;
use std::future::Future;
use tokio::signal::unix::{SignalKind, signal};

/// Installs the SIGINT and SIGTERM handlers now and returns a future that completes at the
/// first of them. Installing before the listen address is announced means a signal sent right
/// after it is never fatal.
pub fn shutdown_signal() -> anyhow::Result<impl Future<Output = ()> + Send + 'static> {
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot install the SIGINT handler")?;
    let mut terminate = signal(SignalKind::terminate()).context("cannot install the SIGTERM handler")?;
    Ok(async move {
        let name = tokio::select! {
            _ = interrupt.recv() => "SIGINT",
            _ = terminate.recv() => "SIGTERM",
        };
        tracing::info!("{name} received");
    })
}
