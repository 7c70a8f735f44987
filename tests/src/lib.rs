//! Harness for the end-to-end tests: the real fakesim-hil server started in-process on
//! `127.0.0.1:0` with a temporary runs directory, and tonic clients connected to it.

use anyhow::Context;
use fakesim_hil::{Settings, serve};
use fakesim_proto::v1::joint_values::Form;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::{JointValues, NamedJointValues, OrderedJointValues};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use tempfile::TempDir;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tonic::transport::{Channel, Endpoint};

/// A server running in this process; it stops when [`TestServer::stop`] is called or the value
/// is dropped.
pub struct TestServer {
    addr: SocketAddr,
    runs_dir: TempDir,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<anyhow::Result<()>>,
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
