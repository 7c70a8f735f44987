//! How the tools reach a session service: a gRPC connection to a daemon (`HOST:PORT` or
//! `unix:PATH`, with an optional bearer token, holding the daemon's control lease when asked),
//! or the daemon's own service in the same process.

use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::{AcquireLeaseRequest, RenewLeaseRequest};
use http::header::{AUTHORIZATION, HeaderName, HeaderValue};
use hyper_util::rt::TokioIo;
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;
use tonic::body::Body;
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity, Uri};
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
    /// Take the daemon's control lease under this holder name, renew it while connected, and
    /// send it (`x-fakesim-lease`) on every call.
    pub lease_holder: Option<String>,
    /// TLS settings; `None` connects in plaintext.
    pub tls: Option<ClientTls>,
}

/// TLS toward the daemon: the CA its certificate is checked against, and an optional client
/// certificate (all PEM).
#[derive(Debug, Clone)]
pub struct ClientTls {
    /// CA certificates, PEM.
    pub ca_pem: Vec<u8>,
    /// Client certificate chain and its private key, PEM.
    pub identity: Option<(Vec<u8>, Vec<u8>)>,
}

impl ClientTls {
    fn config(&self) -> ClientTlsConfig {
        let config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&self.ca_pem));
        match &self.identity {
            Some((cert, key)) => config.identity(Identity::from_pem(cert, key)),
            None => config,
        }
    }
}

/// Metadata key a call carries the control lease in.
pub const LEASE_METADATA: &str = "x-fakesim-lease";
const LEASE_HEADER: HeaderName = HeaderName::from_static(LEASE_METADATA);
/// Time to live asked for the lease; it is renewed three times as often.
const LEASE_TTL: Duration = Duration::from_secs(5);

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
        let scheme = if target.tls.is_some() { "https" } else { "http" };
        let mut endpoint = Endpoint::from_shared(format!("{scheme}://{address}")).map_err(|e| bad(e.to_string()))?;
        if let Some(tls) = &target.tls {
            endpoint = endpoint.tls_config(tls.config()).map_err(|e| bad(e.to_string()))?;
        }
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
    let authorized = BoxCloneSyncService::new(with_header(channel, AUTHORIZATION, authorization));
    let lease = match &target.lease_holder {
        Some(holder) => hold_lease(HardwareServiceClient::new(authorized.clone()), holder).await,
        None => None,
    };
    let service = with_header(authorized, LEASE_HEADER, lease);
    Ok(SessionServiceClient::new(BoxCloneSyncService::new(service)))
}

/// `service` with `header` set to `value` (when there is one) on every request.
fn with_header<S>(service: S, header: HeaderName, value: Option<HeaderValue>) -> SessionChannel
where
    S: tower::Service<http::Request<Body>, Response = http::Response<Body>> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
{
    let service = ServiceBuilder::new()
        .map_request(move |mut request: http::Request<Body>| {
            if let Some(value) = &value {
                request.headers_mut().insert(header.clone(), value.clone());
            }
            request
        })
        .service(service)
        .map_err(|e| TransportError(e.into()));
    BoxCloneSyncService::new(service)
}

/// Takes the control lease as `holder` and keeps renewing it until a renewal fails (the lease
/// was taken over, or the daemon went away). Without it (another client holds it), the tools
/// still run, and each motion is refused naming the holder.
async fn hold_lease(mut hardware: HardwareServiceClient<SessionChannel>, holder: &str) -> Option<HeaderValue> {
    let request = AcquireLeaseRequest {
        holder: holder.to_owned(),
        ttl_ms: u32::try_from(LEASE_TTL.as_millis()).unwrap_or(u32::MAX),
        takeover: false,
        arm: String::new(),
    };
    let lease_id = match hardware.acquire_lease(request).await {
        Ok(granted) => granted.into_inner().lease.map(|lease| lease.lease_id)?,
        Err(status) => {
            tracing::warn!(%status, "running without the control lease: motion will be refused");
            return None;
        }
    };
    let header = HeaderValue::try_from(lease_id.as_str()).ok()?;
    tokio::spawn(async move {
        let mut every = tokio::time::interval(LEASE_TTL / 3);
        every.tick().await;
        loop {
            every.tick().await;
            let renew = RenewLeaseRequest {
                lease_id: lease_id.clone(),
            };
            if let Err(status) = hardware.renew_lease(renew).await {
                tracing::warn!(%status, "the control lease is lost: motion will be refused");
                return;
            }
        }
    });
    Some(header)
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
