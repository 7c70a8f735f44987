//! How the tools reach a session service: a gRPC connection to a daemon (`HOST:PORT` or
//! `unix:PATH`, with an optional bearer token), or the daemon's own service in the same process.

use fakesim_proto::v1::session_service_client::SessionServiceClient;
use http::header::{AUTHORIZATION, HeaderValue};
use hyper_util::rt::TokioIo;
use std::path::PathBuf;
use thiserror::Error;
use tonic::body::Body;
use tonic::transport::{Endpoint, Uri};
use tower::util::BoxCloneSyncService;
use tower::{BoxError, ServiceBuilder, ServiceExt};

/// Any transport the generated session client can call through.
pub type SessionChannel = BoxCloneSyncService<http::Request<Body>, http::Response<Body>, TransportError>;

/// A failure below gRPC (connection lost, refused), whatever the transport.
#[derive(Debug, Error)]
#[error(transparent)]
pub struct TransportError(BoxError);

/// The session-service client every tool uses.
pub type SessionClient = SessionServiceClient<SessionChannel>;

/// Why the daemon could not be reached.
#[derive(Debug, Error)]
pub enum ConnectError {
    /// The address is neither `HOST:PORT` nor `unix:PATH`.
    #[error("cannot use {address:?} as a daemon address (HOST:PORT or unix:PATH): {detail}")]
    Address {
        /// The address as given (bounded).
        address: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The token is not a valid header value.
    #[error("the token contains characters that cannot be sent in a header")]
    Token,
    /// Nothing answered at the address.
    #[error("cannot connect to the daemon at {address}: {source}")]
    Unreachable {
        /// The address as given.
        address: String,
        /// The transport's error.
        source: tonic::transport::Error,
    },
}

/// Where and how to reach a running daemon.
#[derive(Debug, Clone)]
pub struct Target {
    /// `HOST:PORT` or `unix:PATH`.
    pub address: String,
    /// Bearer token sent as `authorization: Bearer <token>` on every call.
    pub token: Option<String>,
}

/// The longest address quoted back in an error.
const MAX_QUOTED: usize = 200;

/// Connects to the daemon at `target` and returns a session client over that connection.
pub async fn connect(target: &Target) -> Result<SessionClient, ConnectError> {
    let address = target.address.as_str();
    let bad = |detail: String| ConnectError::Address {
        address: address.chars().take(MAX_QUOTED).collect(),
        detail,
    };
    let channel = if let Some(path) = address.strip_prefix("unix:") {
        let path = PathBuf::from(path);
        // The URI is a placeholder: the connector below always opens the socket file.
        let endpoint = Endpoint::from_static("http://localhost");
        endpoint
            .connect_with_connector(tower::service_fn(move |_: Uri| {
                let path = path.clone();
                async move { tokio::net::UnixStream::connect(path).await.map(TokioIo::new) }
            }))
            .await
    } else {
        let endpoint = Endpoint::from_shared(format!("http://{address}")).map_err(|e| bad(e.to_string()))?;
        endpoint.connect().await
    }
    .map_err(|source| ConnectError::Unreachable {
        address: address.chars().take(MAX_QUOTED).collect(),
        source,
    })?;
    let authorization = match &target.token {
        Some(token) => Some(HeaderValue::try_from(format!("Bearer {token}")).map_err(|_| ConnectError::Token)?),
        None => None,
    };
    let service = ServiceBuilder::new()
        .map_request(move |mut request: http::Request<Body>| {
            if let Some(value) = &authorization {
                request.headers_mut().insert(AUTHORIZATION, value.clone());
            }
            request
        })
        .service(channel)
        .map_err(|e| TransportError(e.into()));
    Ok(SessionServiceClient::new(BoxCloneSyncService::new(service)))
}

/// A session client calling `service` directly in this process, with no network in between.
pub fn in_process<S>(service: S) -> SessionClient
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    SessionServiceClient::new(BoxCloneSyncService::new(service.map_err(|e| TransportError(e.into()))))
}
