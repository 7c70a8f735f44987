//! Logs to stderr through `tracing`, filtered by `--log-level`.

use anyhow::Context;
use tracing_subscriber::EnvFilter;

/// Installs the stderr subscriber with the given filter (a level or tracing directives).
pub fn init(filter: &str) -> anyhow::Result<()> {
    let filter = EnvFilter::try_new(filter).with_context(|| format!("invalid --log-level {filter:?}"))?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init()
        .map_err(|e| anyhow::anyhow!("cannot install the log subscriber: {e}"))
}
