//! The episode tools of fakesim-hil over the Model Context Protocol.
//!
//! [`EpisodeTools`] is an MCP server whose every tool is one call of the daemon's
//! `fakesim.v1.SessionService`, reached over gRPC ([`connect::connect`]) or in the same process
//! ([`connect::in_process`]); the daemon alone decides what a tool does. [`serve_stdio`] serves
//! the tools to an agent host that launched this process, [`serve_http`] over MCP's streamable
//! HTTP.

pub mod arguments;
pub mod connect;
pub mod describe;
pub mod refusal;
pub mod results;
pub mod tools;

pub use tools::{Access, EpisodeTools};

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use std::sync::Arc;
use thiserror::Error;
use tokio::net::TcpListener;
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
    /// The HTTP server failed.
    #[error("the MCP HTTP server failed: {0}")]
    Http(#[from] std::io::Error),
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

/// Serves `tools` over streamable HTTP at [`HTTP_PATH`] on `listener` until `shutdown` is
/// cancelled. Only requests whose `Host` is one of `allowed_hosts` are answered (a guard against
/// DNS rebinding).
pub async fn serve_http(
    tools: EpisodeTools,
    listener: TcpListener,
    allowed_hosts: Vec<String>,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let mut config = StreamableHttpServerConfig::default().with_allowed_hosts(allowed_hosts);
    config.cancellation_token = shutdown.child_token();
    let service = StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service(HTTP_PATH, service);
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await?;
    Ok(())
}
