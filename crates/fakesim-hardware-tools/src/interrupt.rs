//! Ctrl-C for the long-running commands, its handler installed before they announce themselves:
//! a SIGINT sent as soon as a command has said it is ready stops it cleanly instead of killing it.

use anyhow::Context;
use tokio::signal::unix::{SignalKind, signal};

/// A future that completes at the next SIGINT; the handler is in place once this returns.
pub fn installed() -> anyhow::Result<impl Future<Output = std::io::Result<()>>> {
    let mut interrupt = signal(SignalKind::interrupt()).context("installing the Ctrl-C handler")?;
    Ok(async move {
        interrupt.recv().await;
        Ok(())
    })
}
