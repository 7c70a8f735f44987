//! The gRPC server: health, reflection, the robot, session, hardware and preview services,
//! graceful shutdown.

use crate::access::auth::Authenticator;
use crate::access::tls::ConnInfo;
use crate::access::tls::{self, AppProtocol};
use crate::config::ListenAddr;
use crate::config::Settings;
use crate::services::hardware::HardwareService;
use crate::services::preview::PreviewService;
use crate::services::robot::RobotService;
use crate::services::session::SessionService;
use crate::state::AppState;
use crate::transport::limits;
use crate::transport::listen::Listener;
use crate::transport::mcp_http;
use crate::transport::notify::notify;
use crate::transport::signal::shutdown_signal;
use crate::wire::status;
use anyhow::Context;
use fakesim_proto::FILE_DESCRIPTOR_SET;
use fakesim_proto::v1::hardware_service_server::HardwareServiceServer;
use fakesim_proto::v1::preview_service_server::PreviewServiceServer;
use fakesim_proto::v1::robot_service_server::RobotServiceServer;
use fakesim_proto::v1::session_service_server::SessionServiceServer;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_stream::wrappers::UnixListenerStream;
use tokio_util::sync::CancellationToken;
use tonic::service::{Interceptor, InterceptorLayer};
use tonic::transport::Server;
use tonic::{Request, Status};
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

/// How long calls still open after a shutdown request (a health watch, say) are waited for.
const DRAIN_GRACE: Duration = Duration::from_secs(10);

/// Binds `settings.listen` and serves until SIGINT or SIGTERM. Under a service manager
/// (`$NOTIFY_SOCKET` set, systemd's `Type=notify`) it sends `READY=1` once the port is bound
/// and serving, and `STOPPING=1` at the stop signal.
pub async fn run(settings: Settings) -> anyhow::Result<()> {
    let signal = shutdown_signal()?;
    let shutdown = async move {
        signal.await;
        notify("STOPPING=1");
    };
    let listener = Listener::bind(&settings.listen).await?;
    serve_with(settings, listener, shutdown, |addr| {
        announce(&addr);
        notify("READY=1");
    })
    .await
}

/// Serves the daemon's services on `listener` until `shutdown` completes, then stops accepting,
/// lets the calls in flight finish (up to a grace period), runs the session service's shutdown
/// hook, and returns. Once serving, prints the bound address alone on a line of stdout, for
/// scripts that start the daemon on port 0.
pub async fn serve(
    settings: Settings,
    listener: impl Into<Listener>,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    serve_with(settings, listener, shutdown, |addr| announce(&addr)).await
}

/// Prints the bound address alone on a line of stdout.
fn announce(addr: &ListenAddr) {
    println!("{addr}");
}

/// [`serve`], telling `ready` the bound address instead of printing it (stdout may be another
/// protocol's channel, as in `fakesim-hil mcp`).
pub async fn serve_with(
    settings: Settings,
    listener: impl Into<Listener>,
    shutdown: impl Future<Output = ()> + Send,
    ready: impl FnOnce(ListenAddr),
) -> anyhow::Result<()> {
    let listener = listener.into();
    let addr = listener.local_addr()?;
    settings.check_exposure(&addr)?;
    let policy = settings.auth_policy();
    let tls_config = settings.tls.as_ref().map(tls::server_config).transpose()?;
    let acceptor = tls_config
        .as_ref()
        .map(|config| tls::acceptor(config, AppProtocol::Grpc));
    let (max_calls, max_calls_per_connection) = (settings.max_calls, settings.max_calls_per_connection);
    let state = AppState::start(settings).await?;
    let session = Arc::new(SessionService::new(state.clone()));
    let mcp_stop = CancellationToken::new();
    let mcp_task = mcp_http::serve(&state, session.clone(), tls_config.as_ref(), mcp_stop.clone()).await?;

    let (health, health_service) = tonic_health::server::health_reporter();
    set_health(&health, ServingStatus::Serving).await;
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    // Both protocol versions: grpcurl and current clients speak v1, Python's grpcio-reflection
    // and older tools only v1alpha.
    let reflection_v1 = reflection().build_v1().context("cannot build the reflection service")?;
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .context("cannot build the v1alpha reflection service")?;

    let draining = Arc::new(Notify::new());
    let twin_health = health.clone();
    let signal = {
        let draining = draining.clone();
        let mcp_stop = mcp_stop.clone();
        async move {
            shutdown.await;
            tracing::info!("shutting down: no new connections, finishing the calls in flight");
            mcp_stop.cancel();
            set_health(&health, ServingStatus::NotServing).await;
            draining.notify_one();
        }
    };
    let scheme = if acceptor.is_some() { "TLS" } else { "plaintext" };
    let router = Server::builder()
        .max_concurrent_streams(max_calls_per_connection)
        .layer(InterceptorLayer::new(Authenticator::new(policy, state.audit.clone())))
        .layer(limits::layer(max_calls))
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(RobotServiceServer::new(RobotService::new(state.clone())))
        .add_service(HardwareServiceServer::new(HardwareService::new(state.clone())))
        .add_service(PreviewServiceServer::new(PreviewService::new(state.clone())))
        .add_service(SessionServiceServer::from_arc(session.clone()));
    let socket_file = match &listener {
        Listener::Unix(_, path) => Some(path.clone()),
        Listener::Tcp(_) => None,
    };
    let server: Pin<Box<dyn Future<Output = Result<(), tonic::transport::Error>> + Send>> = match listener {
        Listener::Tcp(l) => {
            let incoming = tls::incoming(l, acceptor, state.audit.clone());
            Box::pin(router.serve_with_incoming_shutdown(incoming, signal))
        }
        Listener::Unix(l, _) => Box::pin(router.serve_with_incoming_shutdown(UnixListenerStream::new(l), signal)),
    };

    tracing::info!("serving {scheme}; listening on {addr}");
    ready(addr);
    let mut twin_died = None;
    tokio::select! {
        result = server => result.context("the gRPC server failed")?,
        () = async { draining.notified().await; tokio::time::sleep(DRAIN_GRACE).await } => {
            tracing::warn!("calls still open {DRAIN_GRACE:?} after the shutdown request; leaving them");
        }
        thread = twin_thread_ended(&state, &twin_health) => twin_died = Some(thread),
    }
    mcp_stop.cancel();
    if let Some(task) = mcp_task
        && tokio::time::timeout(DRAIN_GRACE, task).await.is_err()
    {
        tracing::warn!("MCP calls still open {DRAIN_GRACE:?} after the shutdown request; leaving them");
    }
    if let Some(path) = socket_file {
        let _ = std::fs::remove_file(path);
    }
    session.on_shutdown().await;
    if let Some(live_view) = &state.live_view {
        live_view.stop().await;
    }
    for arm in state.arms.iter() {
        arm.bridge.stop().await;
    }
    // MuJoCo and the GL contexts are freed on their own threads, and those threads joined,
    // before the process exits.
    let twin = state.twin.clone();
    tokio::task::spawn_blocking(move || twin.shutdown())
        .await
        .context("the twin's shutdown panicked")?;
    if let Some(thread) = twin_died {
        anyhow::bail!("the twin's {thread} thread ended while serving; restart the daemon (see the log above)");
    }
    tracing::info!("stopped");
    Ok(())
}

/// Waits for a twin thread to end while serving, then reports it: an error in the log, health
/// NOT_SERVING, an event in the live run's journal. Returns the thread's name.
async fn twin_thread_ended(state: &AppState, health: &HealthReporter) -> &'static str {
    let thread = state.twin.thread_ended().await;
    tracing::error!(
        thread,
        "a twin thread ended while serving; stopping with an error for a supervisor to restart"
    );
    set_health(health, ServingStatus::NotServing).await;
    let fields = serde_json::json!({ "thread": thread });
    if let Err(e) = state
        .engine
        .journal_event(fakesim_episode::journal::Kind::TwinThreadEnded, fields)
        .await
    {
        tracing::warn!(error = %e, "cannot journal the end of the twin thread");
    }
    thread
}

/// Sets the overall status and that of every served service.
async fn set_health(health: &HealthReporter, status: ServingStatus) {
    use tonic::server::NamedService;
    for name in [
        "",
        <RobotServiceServer<RobotService> as NamedService>::NAME,
        <SessionServiceServer<SessionService> as NamedService>::NAME,
        <HardwareServiceServer<HardwareService> as NamedService>::NAME,
        <PreviewServiceServer<PreviewService> as NamedService>::NAME,
    ] {
        health.set_service_status(name, status).await;
    }
}

/// The gRPC side of the authenticator: every call's metadata and connection checked before any
/// service sees it, a refusal answered from the error table.
impl Interceptor for Authenticator {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let authorization = request.metadata().get("authorization").map(|value| value.as_bytes());
        match self.admit(request.extensions().get::<ConnInfo>(), authorization) {
            Ok(()) => Ok(request),
            Err(error) => Err(status::from_auth(&error)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use fakesim_episode::ResetRequest;
    use tonic_health::pb::HealthCheckRequest;
    use tonic_health::pb::health_client::HealthClient;

    #[tokio::test(flavor = "multi_thread")]
    async fn a_twin_thread_that_ends_while_serving_is_reported_down_and_journaled() {
        let runs = tempfile::tempdir().unwrap();
        let settings = Settings {
            runs_dir: runs.path().to_owned(),
            ..Settings::default()
        };
        let state = AppState::start(settings).await.unwrap();
        let run = state.engine.reset_task(ResetRequest::default()).await.unwrap().run;
        let (health, health_service) = tonic_health::server::health_reporter();
        set_health(&health, ServingStatus::Serving).await;

        let watching = {
            let (state, health) = (state.clone(), health.clone());
            tokio::spawn(async move { twin_thread_ended(&state, &health).await })
        };
        let twin = state.twin.clone();
        tokio::task::spawn_blocking(move || twin.shutdown()).await.unwrap();
        assert_eq!(watching.await.unwrap(), "preview");

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        tokio::spawn(
            Server::builder()
                .add_service(health_service)
                .serve_with_incoming(incoming),
        );
        let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect()
            .await
            .unwrap();
        let mut client = HealthClient::new(channel);
        let status = client
            .check(HealthCheckRequest { service: String::new() })
            .await
            .unwrap()
            .into_inner()
            .status;
        assert_eq!(status, ServingStatus::NotServing as i32);
        let events = std::fs::read_to_string(runs.path().join(run).join("events.jsonl")).unwrap();
        assert!(
            events.contains(r#""kind":"twin_thread_ended""#) && events.contains(r#""thread":"preview""#),
            "{events}"
        );
    }
}
