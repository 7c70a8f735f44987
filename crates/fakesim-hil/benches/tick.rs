//! `Tick` round trip over gRPC against the same tick in process: one control tick (write the
//! six setpoints, run `substeps_per_tick` physics steps, read the state back), no images.
//!
//! Run with `cargo bench -p fakesim-hil --bench tick`. Prints the median of each path and the
//! ratios.

use anyhow::Context;
use fakesim_hil::{Settings, serve};
use fakesim_proto::v1::TickRequest;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{JointValues, Scene, Sim, TwinConfig, TwinHandle};
use std::future::Future;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

const WARMUP: usize = 100;
const SAMPLES: usize = 2000;

/// Median of `SAMPLES` timed runs of `tick`, after `WARMUP` untimed ones.
async fn median<F: Future<Output = anyhow::Result<()>>>(mut tick: impl FnMut() -> F) -> anyhow::Result<Duration> {
    for _ in 0..WARMUP {
        tick().await?;
    }
    let mut times = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let start = Instant::now();
        tick().await?;
        times.push(start.elapsed());
    }
    times.sort_unstable();
    times.get(SAMPLES / 2).copied().context("no samples")
}

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let mut sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK)?;
        let action = JointValues::Ordered(sim.arm_ctrl().to_vec());
        let direct = median(|| {
            let result = sim
                .send_action(&action, DEFAULT_SUBSTEPS_PER_TICK)
                .map(|()| sim.robot_state());
            async move { result.map(drop).map_err(anyhow::Error::from) }
        })
        .await?;

        let twin = TwinHandle::spawn(TwinConfig::default())?;
        let handle = median(|| {
            let (twin, action) = (twin.clone(), action.clone());
            async move {
                twin.try_with_sim(move |sim| {
                    sim.send_action(&action, sim.substeps_per_tick())?;
                    Ok(sim.robot_state())
                })
                .await?;
                Ok(())
            }
        })
        .await?;

        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let runs = std::env::temp_dir().join("fakesim-bench-runs");
        let settings = Settings {
            listen: addr,
            runs_dir: runs,
            ..Settings::default()
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(settings, listener, async {
            let _ = stopped.await;
        }));
        let client = RobotServiceClient::connect(format!("http://{addr}")).await?;
        let JointValues::Ordered(values) = &action else {
            anyhow::bail!("the action is a vector")
        };
        let grpc = median(|| {
            let mut client = client.clone();
            let request = TickRequest {
                action: values.clone(),
                ..Default::default()
            };
            async move {
                client.tick(request).await?;
                Ok(())
            }
        })
        .await?;
        let _ = stop.send(());
        drop(client);
        server.await??;

        let micros = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "Tick, {DEFAULT_SUBSTEPS_PER_TICK} physics steps, no images; median of {SAMPLES} after {WARMUP} warm-up:"
        );
        println!("  in process, Sim on this thread : {:8.1} us", micros(direct));
        println!("  in process, through TwinHandle : {:8.1} us", micros(handle));
        println!("  over gRPC on 127.0.0.1         : {:8.1} us", micros(grpc));
        println!(
            "  ratio gRPC / Sim               : {:8.2}",
            micros(grpc) / micros(direct)
        );
        println!(
            "  ratio gRPC / TwinHandle        : {:8.2}",
            micros(grpc) / micros(handle)
        );
        Ok(())
    })
}
