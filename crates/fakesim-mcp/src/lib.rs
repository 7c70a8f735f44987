//! The episode tools of fakesim-hil over the Model Context Protocol.
//!
//! [`EpisodeTools`] is an MCP server whose every tool is one call of the daemon's
//! `fakesim.v1.SessionService`, reached over gRPC ([`connect::connect`]) or in the same process
//! ([`connect::in_process`]); the daemon alone decides what a tool does. [`serve_stdio`] serves
//! the tools to an agent host that launched this process, [`http_router`] routes MCP's
//! streamable HTTP to them (the daemon serves it, behind its own access checks).

pub mod arguments;
pub mod connect;
pub mod describe;
pub mod refusal;
pub mod results;
pub mod tools;

pub use tools::{Access, EpisodeTools, MotionLease};

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::sync::Arc;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

/// Path the streamable-HTTP endpoint is served at.
pub const HTTP_PATH: &str = "/mcp";

/// Why serving stopped with an error.
#[derive(Debug, Error)]
pub enum ServeError {
    /// The MCP session could not start (the client's initialisation failed).
    #[error("the MCP session could not start: {0}")]
    Initialize(String),
    /// The MCP session ended abnormally.
    #[error("the MCP session failed: {0}")]
    Session(String),
}

/// Serves `tools` on this process's stdin and stdout until the client closes them.
pub async fn serve_stdio(tools: EpisodeTools) -> Result<(), ServeError> {
    let running = tools
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| ServeError::Initialize(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| ServeError::Session(e.to_string()))?;
    Ok(())
}

/// Routes MCP's streamable HTTP at [`HTTP_PATH`] to the tools `new_session` makes for each MCP
/// session, until `shutdown` is cancelled. With `allowed_hosts`, only requests whose `Host` is one
/// of them are answered (a guard against DNS rebinding, for an endpoint that asks no credentials).
pub fn http_router(
    new_session: impl Fn() -> EpisodeTools + Send + Sync + 'static,
    allowed_hosts: Option<Vec<String>>,
    shutdown: CancellationToken,
) -> axum::Router {
    let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
    let config = match allowed_hosts {
        Some(hosts) => config.with_allowed_hosts(hosts),
        None => config.disable_allowed_hosts(),
    };
    let service = StreamableHttpService::new(
        move || Ok(new_session()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    axum::Router::new().nest_service(HTTP_PATH, service)
}
