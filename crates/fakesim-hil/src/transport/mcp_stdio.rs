//! `fakesim-hil mcp`: the episode tools over MCP on stdin/stdout, calling a running daemon
//! (`--connect`) or a sim-only daemon started in this process. The daemon's own
//! streamable-HTTP endpoint (`--mcp-listen`) is [`crate::transport::mcp_http`].

use crate::config::{DaemonOptions, Settings, TwinOptions};
use crate::transport::signal::shutdown_signal;
use anyhow::{Context, bail};
use clap::Args;
use fakesim_mcp::connect::{self, ClientTls, Target};
use fakesim_mcp::{Access, EpisodeTools};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Environment variable holding the bearer token for `--connect`.
const TOKEN_ENV: &str = "FAKESIM_HIL_TOKEN";
/// Environment variable naming the CA file that turns TLS on for `--connect`.
const TLS_CA_ENV: &str = "FAKESIM_HIL_TLS_CA";

/// Options of `fakesim-hil mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Daemon whose session the tools drive, HOST:PORT or unix:PATH; without it a sim-only
    /// twin runs in this process with the options below.
    #[arg(long, value_name = "ADDR")]
    pub connect: Option<String>,
    /// File holding the bearer token sent to the daemon (else the FAKESIM_HIL_TOKEN variable).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// CA certificate (PEM) the daemon's certificate is checked against; turns TLS on (else the
    /// FAKESIM_HIL_TLS_CA variable).
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
    /// Client certificate (PEM) to show the daemon, with --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Holder name under which --connect takes the daemon's control lease (shown in its
    /// hardware status); the lease is renewed while the tools run.
    #[arg(long, value_name = "NAME", default_value = "fakesim-hil mcp")]
    pub lease_holder: String,
    /// Serve only list_tasks, get_observation and get_session_info: nothing moves.
    #[arg(long)]
    pub observe_only: bool,
    /// Options of the in-process twin (without --connect).
    #[command(flatten)]
    pub twin: TwinOptions,
}

impl McpArgs {
    fn access(&self) -> Access {
        if self.observe_only {
            Access::ObserveOnly
        } else {
            Access::Full
        }
    }

    fn token(&self) -> anyhow::Result<Option<String>> {
        if let Some(path) = &self.token_file {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read the token file {}", path.display()))?;
            return Ok(Some(text.trim().to_owned()));
        }
        Ok(std::env::var(TOKEN_ENV).ok().filter(|token| !token.is_empty()))
    }

    fn tls(&self) -> anyhow::Result<Option<ClientTls>> {
        let read = |path: &PathBuf| std::fs::read(path).with_context(|| format!("cannot read {}", path.display()));
        let ca = match &self.tls_ca {
            Some(path) => path.clone(),
            None => match std::env::var_os(TLS_CA_ENV) {
                Some(path) if !path.is_empty() => PathBuf::from(path),
                _ if self.tls_cert.is_some() => bail!("--tls-cert needs --tls-ca (or {TLS_CA_ENV})"),
                _ => return Ok(None),
            },
        };
        let identity = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some((read(cert)?, read(key)?)),
            _ => None,
        };
        Ok(Some(ClientTls {
            ca_pem: read(&ca)?,
            identity,
        }))
    }
}

/// Serves the tools on stdin/stdout until the client closes them or a signal arrives.
pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    let signal = shutdown_signal()?;
    let access = args.access();
    let (client, daemon) = match &args.connect {
        Some(address) => {
            let only_logging = TwinOptions {
                log_level: args.twin.log_level.clone(),
                ..TwinOptions::default()
            };
            if args.twin != only_logging {
                bail!("--connect uses the running daemon's settings: drop the twin options (--log-level may stay)");
            }
            let target = Target {
                address: address.clone(),
                token: args.token()?,
                lease_holder: (!args.observe_only).then(|| args.lease_holder.clone()),
                tls: args.tls()?,
            };
            (connect::connect(&target).await?, None)
        }
        None => {
            let (client, daemon) = in_process_daemon(&args.twin).await?;
            (client, Some(daemon))
        }
    };
    let served = tokio::select! {
        served = fakesim_mcp::serve_stdio(EpisodeTools::new(client, access)) => served.map_err(anyhow::Error::from),
        () = signal => Ok(()),
    };
    if let Some(daemon) = daemon {
        daemon.stop.cancel();
        daemon.task.await.context("the in-process daemon panicked")??;
    }
    served
}

/// A sim-only daemon served on a loopback port of this process.
struct InProcess {
    stop: CancellationToken,
    task: JoinHandle<anyhow::Result<()>>,
}

async fn in_process_daemon(twin: &TwinOptions) -> anyhow::Result<(connect::SessionClient, InProcess)> {
    let options = DaemonOptions {
        twin: twin.clone(),
        ..DaemonOptions::default()
    };
    let mut settings = Settings::from_args(&options)?;
    if settings.port.is_some() || settings.mcp_listen.is_some() {
        bail!(
            "the in-process twin is sim-only and --config names a port or an MCP address: run the \
             daemon itself with that file, then `fakesim-hil mcp --connect ADDR`"
        );
    }
    let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    settings.listen = loopback.into();
    let listener = TcpListener::bind(loopback)
        .await
        .context("cannot listen on a loopback port")?;
    let address = listener.local_addr()?.to_string();
    let stop = CancellationToken::new();
    let task = tokio::spawn(crate::transport::server::serve_with(
        settings,
        listener,
        stop.clone().cancelled_owned(),
        |_| {},
    ));
    let target = Target {
        address,
        token: None,
        lease_holder: None,
        tls: None,
    };
    let client = connect::connect(&target).await?;
    Ok((client, InProcess { stop, task }))
}
