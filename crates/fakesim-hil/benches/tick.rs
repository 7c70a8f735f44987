//! `Tick` round trip over gRPC (TCP on 127.0.0.1 and a Unix domain socket) against the same tick
//! in process: one control tick (write the six setpoints, run `substeps_per_tick` physics steps,
//! read the state back), no images. To show where the extra time goes it also times the health
//! check over TCP (the transport alone, no twin), and each transport twice: through tonic's
//! `Channel` (which hands every call to a buffer task of its own) and on a bare HTTP/2
//! connection (the client's hand-off removed, the server unchanged). The paths take turns sample
//! by sample, so the shared machine's load falls on all of them alike; each daemon checks
//! afterwards that it ran exactly the ticks its clients counted.
//!
//! Run with `cargo bench -p fakesim-hil --bench tick`. Prints the median of each path and the
//! ratios.

use anyhow::ensure;
use fakesim_hil::listen::{ListenAddr, Listener};
use fakesim_hil::{Settings, serve};
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::{GetRobotStateRequest, TickRequest};
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{JointValues, Scene, Sim, TwinConfig, TwinHandle};
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use tokio::net::{TcpStream, UnixStream};
use tokio::sync::oneshot;
use tonic::codegen::http;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;
use tower::util::BoxCloneService;

const WARMUP: usize = 100;
const SAMPLES: usize = 2000;
const TICKS: u64 = (WARMUP + SAMPLES) as u64;

/// A daemon task and the sender that stops it.
type Daemon = (oneshot::Sender<()>, tokio::task::JoinHandle<anyhow::Result<()>>);

/// A daemon serving on `listen` until the returned sender is used or dropped; also returns the
/// address bound.
async fn start(listen: ListenAddr) -> anyhow::Result<(ListenAddr, Daemon)> {
    let listener = Listener::bind(&listen).await?;
    let listen = listener.local_addr()?;
    let settings = Settings {
        listen: listen.clone(),
        runs_dir: std::env::temp_dir().join("fakesim-bench-runs"),
        ..Settings::default()
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let server = tokio::spawn(serve(settings, listener, async {
        let _ = stopped.await;
    }));
    Ok((listen, (stop, server)))
}

/// A channel over a Unix domain socket.
async fn unix_channel(path: PathBuf) -> anyhow::Result<Channel> {
    let connector = tower::service_fn(move |_| {
        let path = path.clone();
        async move { UnixStream::connect(path).await.map(TokioIo::new) }
    });
    // The URI is required by the API and unused by the connector.
    Ok(Endpoint::try_from("http://[::1]:50051")?
        .connect_with_connector(connector)
        .await?)
}

/// A tonic client on a bare HTTP/2 connection: calls go straight to the connection, without
/// `Channel`'s buffer task.
type Bare = BoxCloneService<http::Request<tonic::body::Body>, http::Response<hyper::body::Incoming>, hyper::Error>;

/// A client on its own HTTP/2 connection over `io`.
async fn bare_client<IO>(io: IO) -> anyhow::Result<RobotServiceClient<Bare>>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (send, connection) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io).await?;
    tokio::spawn(connection);
    let service = tower::service_fn(move |request| {
        let mut send = send.clone();
        async move { send.send_request(request).await }
    });
    Ok(RobotServiceClient::with_origin(
        BoxCloneService::new(service),
        "http://localhost".parse()?,
    ))
}

/// Times one call.
async fn timed<T>(samples: &mut Vec<Duration>, call: impl Future<Output = anyhow::Result<T>>) -> anyhow::Result<T> {
    let start = Instant::now();
    let out = call.await?;
    samples.push(start.elapsed());
    Ok(out)
}

fn median_us(mut samples: Vec<Duration>) -> f64 {
    samples.sort_unstable();
    samples[samples.len() / 2].as_secs_f64() * 1e6
}

/// One tick over gRPC; returns the daemon's physics step count after it.
async fn grpc_tick<T>(client: &mut RobotServiceClient<T>, action: &[f64]) -> anyhow::Result<u64>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<tonic::codegen::StdError>,
    T::ResponseBody: tonic::codegen::Body<Data = tonic::codegen::Bytes> + Send + 'static,
    <T::ResponseBody as tonic::codegen::Body>::Error: Into<tonic::codegen::StdError> + Send,
{
    let request = TickRequest {
        action: action.to_vec(),
        ..Default::default()
    };
    Ok(client.tick(request).await?.into_inner().physics_steps)
}

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let mut sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK)?;
        let dt = sim.model_info().timestep;
        let values = sim.arm_ctrl().to_vec();
        let action = JointValues::Ordered(values.clone());
        let twin = TwinHandle::spawn(TwinConfig::default())?;

        let (tcp_addr, (tcp_stop, tcp_server)) = start(ListenAddr::Tcp((Ipv4Addr::LOCALHOST, 0).into())).await?;
        let socket = std::env::temp_dir().join(format!("fakesim-bench-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&socket);
        let (_, (unix_stop, unix_server)) = start(ListenAddr::Unix(socket.clone())).await?;
        let mut tcp = RobotServiceClient::new(Endpoint::from_shared(format!("http://{tcp_addr}"))?.connect().await?);
        let mut health = HealthClient::new(Endpoint::from_shared(format!("http://{tcp_addr}"))?.connect().await?);
        let mut unix = RobotServiceClient::new(unix_channel(socket.clone()).await?);
        let ListenAddr::Tcp(tcp_socket) = tcp_addr else {
            anyhow::bail!("a TCP daemon")
        };
        let tcp_stream = TcpStream::connect(tcp_socket).await?;
        tcp_stream.set_nodelay(true)?;
        let mut tcp_bare = bare_client(TokioIo::new(tcp_stream)).await?;
        let mut unix_bare = bare_client(TokioIo::new(UnixStream::connect(&socket).await?)).await?;

        let tcp_start = tcp.get_robot_state(GetRobotStateRequest::default()).await?.into_inner().physics_steps;
        let unix_start = unix.get_robot_state(GetRobotStateRequest::default()).await?.into_inner().physics_steps;

        let names = ["Sim", "TwinHandle", "TCP", "unix", "TCP bare", "unix bare", "health TCP"];
        let mut samples: Vec<Vec<Duration>> = names.iter().map(|_| Vec::with_capacity(SAMPLES)).collect();
        let (mut tcp_steps, mut unix_steps) = (0, 0);
        for i in 0..WARMUP + SAMPLES {
            let mut round: Vec<Vec<Duration>> = names.iter().map(|_| Vec::new()).collect();
            timed(&mut round[0], async {
                sim.send_action(&action, DEFAULT_SUBSTEPS_PER_TICK)?;
                Ok(sim.robot_state())
            })
            .await?;
            let handle_action = action.clone();
            timed(&mut round[1], async {
                let state = twin
                    .try_with_sim(move |sim| {
                        sim.send_action(&handle_action, sim.substeps_per_tick())?;
                        Ok(sim.robot_state())
                    })
                    .await?;
                Ok(state)
            })
            .await?;
            timed(&mut round[2], grpc_tick(&mut tcp, &values)).await?;
            timed(&mut round[3], grpc_tick(&mut unix, &values)).await?;
            tcp_steps = timed(&mut round[4], grpc_tick(&mut tcp_bare, &values)).await?;
            unix_steps = timed(&mut round[5], grpc_tick(&mut unix_bare, &values)).await?;
            timed(&mut round[6], async {
                let request = HealthCheckRequest { service: String::new() };
                Ok(health.check(request).await?)
            })
            .await?;
            if i >= WARMUP {
                for (all, one) in samples.iter_mut().zip(round) {
                    all.extend(one);
                }
            }
        }
        let expected = TICKS * u64::from(DEFAULT_SUBSTEPS_PER_TICK);
        let sim_steps = (sim.time() / dt).round() as u64;
        let handle_steps = twin.with_sim(move |sim| (sim.time() / dt).round() as u64).await?;
        for (what, steps, want) in [
            ("Sim", sim_steps, expected),
            ("TwinHandle", handle_steps, expected),
            ("the TCP daemon", tcp_steps - tcp_start, 2 * expected),
            ("the unix daemon", unix_steps - unix_start, 2 * expected),
        ] {
            ensure!(steps == want, "{what} ran {steps} physics steps, expected {want}");
        }
        drop((tcp, unix, tcp_bare, unix_bare, health));
        let _ = (tcp_stop.send(()), unix_stop.send(()));
        tcp_server.await??;
        unix_server.await??;

        let us: Vec<f64> = samples.into_iter().map(median_us).collect();
        let [direct, handle, over_tcp, over_unix, bare_tcp, bare_unix, transport] = us[..] else {
            anyhow::bail!("seven paths")
        };
        println!(
            "Tick, {DEFAULT_SUBSTEPS_PER_TICK} physics steps, no images; median of {SAMPLES} after {WARMUP} warm-up, paths in turn:"
        );
        println!("  in process, Sim on this thread : {direct:8.1} us");
        println!("  in process, through TwinHandle : {handle:8.1} us  ({:.2} of Sim)", handle / direct);
        for (what, us) in [
            ("over gRPC, TCP 127.0.0.1      ", over_tcp),
            ("over gRPC, Unix socket        ", over_unix),
            ("  TCP, bare HTTP/2 client     ", bare_tcp),
            ("  Unix, bare HTTP/2 client    ", bare_unix),
        ] {
            println!("  {what} : {us:8.1} us  ({:.2} of Sim, {:.2} of TwinHandle)", us / direct, us / handle);
        }
        println!("  health check over TCP, no twin : {transport:8.1} us  (the transport alone)");
        Ok(())
    })
}
