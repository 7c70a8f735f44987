//! Opens the recording stream a target names, with the SDK's telemetry compiled out.

use crate::{LiveViewError, Target};
use re_web_viewer_server::{WebViewerServer, WebViewerServerPort};
use rerun::web_viewer::WebViewerConfig;
use rerun::{MemoryLimit, RecordingStream, RecordingStreamBuilder, ServerOptions};
use std::net::IpAddr;

/// The application id the recording carries (the viewer groups recordings by it).
pub(crate) const APPLICATION_ID: &str = "fakesim-hil";
/// History the served gRPC endpoint keeps for late viewers; the oldest goes first.
const SERVED_HISTORY_BYTES: u64 = 256 * 1024 * 1024;

/// A recording stream, and the web viewer's server when serving one.
pub(crate) struct Opened {
    /// Where every row goes.
    pub rec: RecordingStream,
    /// Kept alive while the stream is: dropping it stops serving the viewer.
    _web_viewer: Option<WebViewerServer>,
}

impl Opened {
    /// Opens `target`.
    pub fn new(target: &Target) -> Result<Self, LiveViewError> {
        let failed = |e: &dyn std::fmt::Display| LiveViewError::Rerun {
            target: target.to_string(),
            message: e.to_string(),
        };
        let builder = RecordingStreamBuilder::new(APPLICATION_ID);
        let (rec, web_viewer) = match target {
            Target::Spawn => (builder.spawn().map_err(|e| failed(&e))?, None),
            Target::Connect(addr) => (
                builder
                    .connect_grpc_opts(format!("rerun+http://{addr}/proxy"))
                    .map_err(|e| failed(&e))?,
                None,
            ),
            Target::Save(path) => (builder.save(path).map_err(|e| failed(&e))?, None),
            Target::Serve { web, grpc_port } => {
                let host = match web.ip() {
                    IpAddr::V4(ip) => ip.to_string(),
                    IpAddr::V6(ip) => format!("[{ip}]"),
                };
                let options = ServerOptions {
                    memory_limit: MemoryLimit::from_bytes(SERVED_HISTORY_BYTES),
                    ..ServerOptions::default()
                };
                let rec = builder
                    .serve_grpc_opts(&host, *grpc_port, options)
                    .map_err(|e| failed(&e))?;
                let server = rerun::serve_web_viewer(WebViewerConfig {
                    bind_ip: web.ip().to_string(),
                    web_port: WebViewerServerPort(web.port()),
                    connect_to: vec![format!("rerun+http://{host}:{grpc_port}/proxy")],
                    open_browser: false,
                    ..WebViewerConfig::default()
                })
                .map_err(|e| failed(&e))?;
                tracing::info!(
                    url = %format!("{}/?url=rerun%2Bhttp://{host}:{grpc_port}/proxy", server.server_url()),
                    "live view: web viewer served"
                );
                (rec, Some(server))
            }
        };
        Ok(Opened {
            rec,
            _web_viewer: web_viewer,
        })
    }
}
