//! The daemon's MCP endpoint (`--mcp-listen`): the episode tools over streamable HTTP, HTTPS with
//! the daemon's TLS configuration when it has one, every request checked by the same
//! authenticator as gRPC calls, and each MCP session taking the control lease as a named holder
//! when a motion tool needs it.

use crate::access::auth::{AuthError, AuthPolicy, Authenticator};
use crate::access::lease::{Leases, MAX_HOLDER_CHARS, MAX_TTL_MS};
use crate::access::tls::{self, AppProtocol, Conn, ConnInfo, Transport};
use crate::controller::Need;
use crate::services::session::SessionService;
use crate::state::AppState;
use anyhow::Context;
use axum::extract::connect_info::Connected as AxumConnected;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::serve::{IncomingStream, Listener};
use fakesim_mcp::connect::{self, SessionClient};
use fakesim_mcp::{Access, EpisodeTools, HTTP_PATH, MotionLease};
use fakesim_proto::v1::session_service_server::SessionServiceServer;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::rustls::ServerConfig;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;
use tonic::transport::server::Connected as _;

/// JSON-RPC error code of a request refused before MCP saw it (server-defined range).
const REFUSED_CODE: i64 = -32001;

/// Starts the MCP endpoint when `--mcp-listen` asks for one, calling `session` in this process
/// and speaking TLS with `tls` when the daemon has it; it stops when `stop` is cancelled.
pub async fn serve(
    state: &AppState,
    session: Arc<SessionService>,
    tls: Option<&ServerConfig>,
    stop: CancellationToken,
) -> anyhow::Result<Option<JoinHandle<()>>> {
    let Some(addr) = state.settings.mcp_listen else {
        return Ok(None);
    };
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen for MCP on {addr}"))?;
    let local = listener.local_addr()?;
    let policy = state.settings.auth_policy();
    // Without credentials only the DNS-rebinding guard keeps web pages away; with TLS or a
    // token, a page can neither pass for this host nor send the token.
    let hosts = (policy == AuthPolicy::default()).then(|| vec!["localhost".to_owned(), local.ip().to_string()]);
    let new_session = session_factory(state, connect::in_process(SessionServiceServer::from_arc(session)));
    let authenticator = Authenticator::new(policy, state.audit.clone());
    let router = fakesim_mcp::http_router(new_session, hosts, stop.clone())
        .layer(middleware::from_fn_with_state(authenticator, admit));
    let acceptor = tls.map(|config| tls::acceptor(config, AppProtocol::Http1));
    let scheme = if acceptor.is_some() { "https" } else { "http" };
    let incoming = Incoming {
        connections: tls::incoming(listener, acceptor, state.audit.clone()),
        local,
    };
    tracing::info!("MCP endpoint at {scheme}://{local}{HTTP_PATH}");
    Ok(Some(tokio::spawn(async move {
        let app = router.into_make_service_with_connect_info::<ConnInfo>();
        let served = axum::serve(incoming, app)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
        if let Err(e) = served {
            tracing::error!(error = %e, "the MCP endpoint stopped");
        }
    })))
}

/// Makes the tools of each new MCP session: all seven, each session with its own control lease,
/// or with `--mcp-observe-only` those that move nothing.
fn session_factory(state: &AppState, client: SessionClient) -> impl Fn() -> EpisodeTools + Send + Sync + 'static {
    let state = state.clone();
    let sessions = AtomicU64::new(0);
    move || {
        if state.settings.mcp_observe_only {
            return EpisodeTools::new(client.clone(), Access::ObserveOnly);
        }
        let needed = {
            let state = state.clone();
            move || state.lease_required(Need::Motion)
        };
        let number = sessions.fetch_add(1, Ordering::Relaxed) + 1;
        let lease = SessionLease::new(state.leases.clone(), Box::new(needed), number);
        EpisodeTools::new(client.clone(), Access::Full).with_lease(Arc::new(lease))
    }
}

/// Lets a request through when the daemon's access policy admits it; else answers the refusal
/// (logged and journaled like a refused gRPC call).
async fn admit(
    State(authenticator): State<Authenticator>,
    ConnectInfo(conn): ConnectInfo<ConnInfo>,
    request: Request,
    next: Next,
) -> Response {
    let authorization = request.headers().get(header::AUTHORIZATION).map(HeaderValue::as_bytes);
    match authenticator.admit(Some(&conn), authorization) {
        Ok(()) => next.run(request).await,
        Err(error) => refusal(&error),
    }
}

/// The HTTP answer to a refused request: 400 for plaintext to the HTTPS port, 401 for a missing
/// or wrong token (with `WWW-Authenticate: Bearer`), 403 without the required client
/// certificate; the body a JSON-RPC error whose message is the reason and what to do. The
/// connection is closed after it (the request's body is left unread).
fn refusal(error: &AuthError) -> Response {
    let status = match error {
        AuthError::TlsRequired => StatusCode::BAD_REQUEST,
        AuthError::TokenRequired { .. } | AuthError::TokenInvalid => StatusCode::UNAUTHORIZED,
        AuthError::ClientCertRequired => StatusCode::FORBIDDEN,
    };
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {
            "code": REFUSED_CODE,
            "message": format!("{}: {error}", error.reason()),
            "data": { "reason": error.reason() },
        },
    });
    let headers = [
        (header::CONTENT_TYPE, "application/json"),
        (header::CONNECTION, "close"),
    ];
    let mut response = (status, headers, body.to_string()).into_response();
    let challenge = match error {
        AuthError::TokenRequired { .. } => Some(r#"Bearer realm="fakesim-hil""#),
        AuthError::TokenInvalid => Some(r#"Bearer realm="fakesim-hil", error="invalid_token""#),
        _ => None,
    };
    if let Some(challenge) = challenge {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
    }
    response
}

/// The control lease of one MCP session: taken as holder `MCP HTTP session N (client)` by the
/// first motion call that needs it, renewed by each later one (time to live: the longest a lease
/// may have, so an agent thinking between calls keeps it), never taken over, released when the
/// session ends.
struct SessionLease {
    leases: Leases,
    /// Whether motion needs the lease now.
    needed: Box<dyn Fn() -> bool + Send + Sync>,
    number: u64,
    held: Mutex<Option<String>>,
}

impl SessionLease {
    /// Session `number`'s lease, none held yet.
    fn new(leases: Leases, needed: Box<dyn Fn() -> bool + Send + Sync>, number: u64) -> Self {
        SessionLease {
            leases,
            needed,
            number,
            held: Mutex::new(None),
        }
    }
}

impl MotionLease for SessionLease {
    fn for_motion(&self, client: Option<&str>) -> Option<String> {
        if !(self.needed)() {
            return None;
        }
        let leases = &self.leases;
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(id) = held.as_deref()
            && leases.renew(id).is_ok()
        {
            return held.clone();
        }
        let holder: String = format!(
            "MCP HTTP session {} ({})",
            self.number,
            client.unwrap_or("unnamed client")
        )
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_HOLDER_CHARS)
        .collect();
        *held = match leases.acquire(&holder, MAX_TTL_MS, false) {
            Ok(granted) => Some(granted.lease_id),
            Err(error) => {
                tracing::info!(holder, %error, "the MCP session runs without the control lease");
                None
            }
        };
        held.clone()
    }
}

impl Drop for SessionLease {
    fn drop(&mut self) {
        let held = self.held.get_mut().unwrap_or_else(PoisonError::into_inner);
        if let Some(id) = held.take() {
            // Already expired or taken over: nothing to give up.
            let _ = self.leases.release(&id);
        }
    }
}

/// The MCP endpoint's connections, accepted and handshaken as the gRPC listener's are.
struct Incoming {
    connections: ReceiverStream<io::Result<Conn>>,
    local: SocketAddr,
}

impl Listener for Incoming {
    type Io = Conn;
    type Addr = ConnInfo;

    async fn accept(&mut self) -> (Conn, ConnInfo) {
        loop {
            match self.connections.next().await {
                Some(Ok(conn)) => {
                    let info = conn.connect_info();
                    return (conn, info);
                }
                Some(Err(e)) => tracing::debug!(error = %e, "an MCP connection failed before serving"),
                None => std::future::pending::<()>().await,
            }
        }
    }

    /// The bound address (as the peer of a plain connection: the type is the one `accept` gives).
    fn local_addr(&self) -> io::Result<ConnInfo> {
        Ok(ConnInfo {
            peer: Some(self.local),
            transport: Transport::Plain,
        })
    }
}

impl AxumConnected<IncomingStream<'_, Incoming>> for ConnInfo {
    fn connect_info(stream: IncomingStream<'_, Incoming>) -> Self {
        *stream.remote_addr()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::access::audit::Audit;
    use std::time::Duration;

    fn session(leases: &Leases, needed: bool, number: u64) -> SessionLease {
        SessionLease::new(leases.clone(), Box::new(move || needed), number)
    }

    fn holder(leases: &Leases) -> Option<String> {
        leases.holder().map(|now| now.holder)
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_holds_the_lease_while_it_moves_and_takes_it_again_after_a_silence() {
        let (audit, _events) = Audit::channel();
        let leases = Leases::start(audit, 1);
        assert_eq!(
            session(&leases, false, 1).for_motion(Some("agent")),
            None,
            "sim: no lease"
        );
        assert_eq!(holder(&leases), None);

        let agent = session(&leases, true, 2);
        let first = agent.for_motion(Some("agent\nhost")).unwrap();
        assert_eq!(holder(&leases).as_deref(), Some("MCP HTTP session 2 (agenthost)"));
        for _ in 0..3 {
            tokio::time::advance(Duration::from_secs(50)).await;
            assert_eq!(
                agent.for_motion(Some("agent")).as_deref(),
                Some(first.as_str()),
                "renewed"
            );
        }
        tokio::time::advance(Duration::from_millis(u64::from(MAX_TTL_MS) + 1)).await;
        assert_eq!(holder(&leases), None, "a minute of silence lets it expire");
        let second = agent.for_motion(Some("agent")).unwrap();
        assert_ne!(second, first, "taken again");

        let other = session(&leases, true, 3);
        assert_eq!(other.for_motion(Some("other")), None, "never taken over");
        leases.acquire("operator", 0, true).unwrap();
        assert_eq!(agent.for_motion(Some("agent")), None, "taken over by the operator");
        drop(agent);
        assert_eq!(
            holder(&leases).as_deref(),
            Some("operator"),
            "a session gives back only its own"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_session_gives_the_lease_back_when_it_ends() {
        let (audit, _events) = Audit::channel();
        let leases = Leases::start(audit, 1);
        let long_name = "x".repeat(200);
        let agent = session(&leases, true, 1);
        agent.for_motion(Some(&long_name)).unwrap();
        assert_eq!(holder(&leases).unwrap().chars().count(), MAX_HOLDER_CHARS);
        drop(agent);
        assert_eq!(holder(&leases), None);
    }
}
