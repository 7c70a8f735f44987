//! How the daemon is reached and run: the gRPC server and its listeners, the MCP endpoints
//! (streamable HTTP, and stdio for `fakesim-hil mcp`), the stop signals, the service manager's
//! readiness notification and logging.

mod limits;
pub mod listen;
pub mod logging;
pub mod mcp_http;
pub mod mcp_stdio;
mod notify;
pub mod server;
mod signal;
