//! Harness for the end-to-end tests: the real fakesim-hil server started in-process on
//! `127.0.0.1:0` with a temporary runs directory, and tonic clients connected to it.

use anyhow::Context;
use fakesim_hil::{Settings, serve};
use fakesim_proto::errors::error_reason;
use fakesim_proto::v1::hardware_service_client::HardwareServiceClient;
use fakesim_proto::v1::joint_values::Form;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::{
    AcquireLeaseRequest, JointStatesSample, JointValues, MoveRequest, NamedJointValues, OrderedJointValues,
    StreamJointStatesRequest, Vec3,
};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio::sync::{OnceCell, oneshot};
use tokio::task::JoinHandle;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, ClientTlsConfig, Endpoint};

pub mod pki;
pub mod virtual_arm;

/// A server running in this process; it stops when [`TestServer::stop`] is called or the value
/// is dropped.
pub struct TestServer {
    addr: SocketAddr,
    runs_dir: TempDir,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<anyhow::Result<()>>,
    /// The control lease [`TestServer::leased`] connections carry, taken on first use.
    lease: OnceCell<String>,
}

impl TestServer {
    /// Starts a server with the default settings, a free port and a fresh runs directory.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_with(|_| {}).await
    }

    /// Starts a server after `configure` has adjusted the settings (listen address and runs
    /// directory are set by the harness).
    pub async fn start_with(configure: impl FnOnce(&mut Settings)) -> anyhow::Result<Self> {
        let runs_dir = tempfile::tempdir().context("cannot create the runs directory")?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let mut settings = Settings {
            listen: addr.into(),
            runs_dir: runs_dir.path().to_path_buf(),
            ..Settings::default()
        };
        configure(&mut settings);
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(serve(settings, listener, async {
            // A dropped sender stops the server as well.
            let _ = stopped.await;
        }));
        Ok(TestServer {
            addr,
            runs_dir,
            stop: Some(stop),
            task,
            lease: OnceCell::new(),
        })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's runs directory.
    pub fn runs_dir(&self) -> &Path {
        self.runs_dir.path()
    }

    /// A new connection to the server.
    pub async fn channel(&self) -> anyhow::Result<Channel> {
        let endpoint = Endpoint::from_shared(format!("http://{}", self.addr))?;
        endpoint
            .connect()
            .await
            .with_context(|| format!("cannot connect to {}", self.addr))
    }

    /// A new TLS connection to the server (which must serve TLS), trusting `tls`.
    pub async fn tls_channel(&self, tls: ClientTlsConfig) -> anyhow::Result<Channel> {
        let endpoint = Endpoint::from_shared(format!("https://{}", self.addr))?.tls_config(tls)?;
        endpoint
            .connect()
            .await
            .with_context(|| format!("cannot connect to {} over TLS", self.addr))
    }

    /// A new connection carrying the server's control lease (holder `e2e test`, the longest
    /// time to live), which the first call takes: mirror and hil need it for motion.
    pub async fn leased(&self) -> anyhow::Result<Conn> {
        let lease_id = self
            .lease
            .get_or_try_init(|| async {
                let request = AcquireLeaseRequest {
                    holder: "e2e test".into(),
                    ttl_ms: fakesim_hil::MAX_TTL_MS,
                    takeover: false,
                    ..Default::default()
                };
                let mut hardware = HardwareServiceClient::new(self.channel().await?);
                let granted = hardware.acquire_lease(request).await?.into_inner();
                granted
                    .lease
                    .map(|lease| lease.lease_id)
                    .context("AcquireLease answered no lease")
            })
            .await?;
        self.with_metadata(CallMetadata::lease(lease_id)?).await
    }

    /// A new connection whose calls all carry `metadata`.
    pub async fn with_metadata(&self, metadata: CallMetadata) -> anyhow::Result<Conn> {
        Ok(InterceptedService::new(self.channel().await?, metadata))
    }

    /// A robot service client on a new connection.
    pub async fn robot(&self) -> anyhow::Result<RobotServiceClient<Channel>> {
        Ok(RobotServiceClient::new(self.channel().await?))
    }

    /// A session service client on a new connection.
    pub async fn session(&self) -> anyhow::Result<SessionServiceClient<Channel>> {
        Ok(SessionServiceClient::new(self.channel().await?))
    }

    /// Requests a graceful shutdown without waiting for it.
    pub fn request_stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// True once the server task has returned.
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }

    /// Requests a graceful shutdown and waits for the server to return its result.
    pub async fn stop(mut self) -> anyhow::Result<()> {
        self.request_stop();
        self.task.await.context("the server task panicked")?
    }
}

/// Asserts that a refusal has gRPC code `code` and `ErrorInfo` reason `reason`.
pub fn assert_reason(status: &tonic::Status, code: tonic::Code, reason: &str) {
    assert_eq!(status.code(), code, "{status:?}");
    assert_eq!(error_reason(status).as_deref(), Some(reason), "{status:?}");
}

/// A `Move` of the TCP by (`x`, `y`, `z`) metres, keeping its orientation.
pub fn move_by(x: f64, y: f64, z: f64) -> MoveRequest {
    MoveRequest {
        delta_xyz: Some(Vec3 { x, y, z }),
        ..Default::default()
    }
}

/// Joint values keyed by name, as a request carries them.
pub fn named(pairs: &[(&str, f64)]) -> JointValues {
    JointValues {
        form: Some(Form::Named(NamedJointValues {
            values: pairs.iter().map(|(key, value)| ((*key).to_owned(), *value)).collect(),
        })),
    }
}

/// Joint values in action-key order, as a request carries them.
pub fn ordered(values: &[f64]) -> JointValues {
    JointValues {
        form: Some(Form::Ordered(OrderedJointValues {
            values: values.to_vec(),
        })),
    }
}

/// A connection whose calls carry fixed metadata (a lease, a token).
pub type Conn = InterceptedService<Channel, CallMetadata>;

/// Metadata sent with every call of a connection.
#[derive(Debug, Clone, Default)]
pub struct CallMetadata {
    pairs: Vec<(&'static str, MetadataValue<Ascii>)>,
}

impl CallMetadata {
    /// No metadata.
    pub fn none() -> Self {
        CallMetadata::default()
    }

    /// The control lease with this id (`x-fakesim-lease`).
    pub fn lease(lease_id: &str) -> anyhow::Result<Self> {
        CallMetadata::none().with(fakesim_hil::LEASE_HEADER, lease_id)
    }

    /// This bearer token (`authorization: Bearer ...`).
    pub fn token(token: &str) -> anyhow::Result<Self> {
        CallMetadata::none().with("authorization", &format!("Bearer {token}"))
    }

    /// Adds one entry.
    pub fn with(mut self, key: &'static str, value: &str) -> anyhow::Result<Self> {
        self.pairs.push((key, value.parse()?));
        Ok(self)
    }
}

impl Interceptor for CallMetadata {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        for (key, value) in &self.pairs {
            request.metadata_mut().insert(*key, value.clone());
        }
        Ok(request)
    }
}

/// Reads the journal at `path` until it has `count` lines of `kind` (the journal is written by
/// a task of its own), yielding to the server between reads; returns those lines.
pub async fn journal_lines(path: &Path, kind: &str, count: usize) -> Vec<serde_json::Value> {
    let mut seen = Vec::new();
    for _ in 0..100_000 {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        seen = text
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|line| line["kind"] == kind)
            .collect();
        if seen.len() >= count {
            return seen;
        }
        tokio::task::yield_now().await;
    }
    panic!(
        "{} has {} `{kind}` lines, not {count}: {seen:?}",
        path.display(),
        seen.len()
    );
}

/// Reads the joint-state stream (100 Hz) until `done` holds for a sample, at most `limit`
/// samples; fails with the last sample when none did.
pub async fn until_sample(
    hw: &mut HardwareServiceClient<Conn>,
    limit: usize,
    done: impl Fn(&JointStatesSample) -> bool,
) -> anyhow::Result<JointStatesSample> {
    let mut stream = hw
        .stream_joint_states(StreamJointStatesRequest {
            rate_hz: 100.0,
            ..Default::default()
        })
        .await?
        .into_inner();
    let mut last = None;
    for _ in 0..limit {
        let sample = stream.message().await?.context("the joint-state stream ended")?;
        if done(&sample) {
            return Ok(sample);
        }
        last = Some(sample);
    }
    anyhow::bail!("condition not met within {limit} samples; last {last:?}")
}
