//! `Tick` round trip over gRPC against the same tick in process: one control tick (write the six
//! setpoints, run `substeps_per_tick` physics steps, read the state back), no images.
//!
//! The daemons are the `fakesim-hil` binary as users run it, in processes of their own, one on
//! TCP 127.0.0.1 and one on a Unix domain socket; the client is this process on a
//! current-thread runtime, as a single-threaded client (Python's grpcio, LeRobot) is. To show
//! where the extra time goes it also times, on each transport, the health check (the transport
//! alone: no twin) and `GetRobotState` (the transport plus the hand-off to the daemon's physics
//! thread and back, no physics), and it reads the daemon's own CPU time per call, split between
//! its physics thread and the rest (tonic, hyper, the async runtime). The paths take turns
//! sample by sample, so the shared machine's load falls on all of them alike; each daemon
//! checks afterwards that it ran exactly the ticks its client counted.
//!
//! Run with `cargo bench -p fakesim-hil --bench tick`. Prints the median of each path and the
//! ratios.

mod support;

use anyhow::ensure;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::{GetRobotStateRequest, TickRequest};
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{JointValues, Scene, Sim, TwinConfig, TwinHandle};
use std::time::Duration;
use support::{Daemon, median_us, timed};
use tonic::transport::Channel;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

const WARMUP: usize = 100;
const SAMPLES: usize = 2000;
const TICKS: u64 = (WARMUP + SAMPLES) as u64;

/// The three calls timed on one daemon.
struct Calls {
    robot: RobotServiceClient<Channel>,
    health: HealthClient<Channel>,
}

impl Calls {
    fn new(daemon: &Daemon) -> Self {
        Calls {
            robot: RobotServiceClient::new(daemon.channel.clone()),
            health: HealthClient::new(daemon.channel.clone()),
        }
    }

    /// One tick; returns the daemon's physics step count after it.
    async fn tick(&mut self, action: &[f64]) -> anyhow::Result<u64> {
        let request = TickRequest {
            action: action.to_vec(),
            ..Default::default()
        };
        Ok(self.robot.tick(request).await?.into_inner().physics_steps)
    }

    async fn state(&mut self) -> anyhow::Result<u64> {
        let request = GetRobotStateRequest::default();
        Ok(self.robot.get_robot_state(request).await?.into_inner().physics_steps)
    }

    async fn health(&mut self) -> anyhow::Result<()> {
        let request = HealthCheckRequest { service: String::new() };
        self.health.check(request).await?;
        Ok(())
    }
}

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK)?;
        let dt = sim.model_info().timestep;
        let values = sim.arm_ctrl().to_vec();
        let action = JointValues::Ordered(values.clone());
        let twin = TwinHandle::spawn(TwinConfig::default())?;

        let socket = std::env::temp_dir().join(format!("fakesim-bench-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&socket);
        let daemons = [
            Daemon::start("127.0.0.1:0", &[]).await?,
            Daemon::start(&format!("unix:{}", socket.display()), &[]).await?,
        ];
        let mut calls = daemons.each_ref().map(Calls::new);
        let mut start_steps = [0; 2];
        for (steps, calls) in start_steps.iter_mut().zip(&mut calls) {
            *steps = calls.state().await?;
        }

        let mut samples: Vec<Vec<Duration>> = (0..8).map(|_| Vec::with_capacity(SAMPLES)).collect();
        let mut steps = [0; 2];
        let mut cpu_start = [(Duration::ZERO, Duration::ZERO); 2];
        for i in 0..WARMUP + SAMPLES {
            if i == WARMUP {
                for (at, daemon) in cpu_start.iter_mut().zip(&daemons) {
                    *at = daemon.physics_and_rest()?;
                }
            }
            let mut round: Vec<Vec<Duration>> = (0..8).map(|_| Vec::new()).collect();
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
            for (k, calls) in calls.iter_mut().enumerate() {
                steps[k] = timed(&mut round[2 + k], calls.tick(&values)).await?;
                timed(&mut round[4 + k], calls.state()).await?;
                timed(&mut round[6 + k], calls.health()).await?;
            }
            if i >= WARMUP {
                for (all, one) in samples.iter_mut().zip(round) {
                    all.extend(one);
                }
            }
        }
        let cpu_per_call: Vec<(f64, f64)> = daemons
            .iter()
            .zip(cpu_start)
            .map(|(daemon, (physics, rest))| {
                let (physics_now, rest_now) = daemon.physics_and_rest()?;
                // Each call of the round: a tick, a state read and a health check.
                let per = |used: Duration| used.as_secs_f64() * 1e6 / SAMPLES as f64;
                Ok((per(physics_now - physics), per(rest_now - rest)))
            })
            .collect::<anyhow::Result<_>>()?;

        let expected = TICKS * u64::from(DEFAULT_SUBSTEPS_PER_TICK);
        let sim_steps = (sim.time() / dt).round() as u64;
        let handle_steps = twin.with_sim(move |sim| (sim.time() / dt).round() as u64).await?;
        for (what, steps, want) in [
            ("Sim", sim_steps, expected),
            ("TwinHandle", handle_steps, expected),
            ("the TCP daemon", steps[0] - start_steps[0], expected),
            ("the unix daemon", steps[1] - start_steps[1], expected),
        ] {
            ensure!(steps == want, "{what} ran {steps} physics steps, expected {want}");
        }
        let addrs = daemons.each_ref().map(|daemon| daemon.addr.clone());
        drop(calls);
        drop(daemons);
        let _ = std::fs::remove_file(&socket);

        let us: Vec<f64> = samples.into_iter().map(median_us).collect();
        let [direct, handle, tick_tcp, tick_unix, state_tcp, state_unix, health_tcp, health_unix] = us[..] else {
            anyhow::bail!("eight paths")
        };
        println!(
            "Tick, {DEFAULT_SUBSTEPS_PER_TICK} physics steps, no images; median of {SAMPLES} after {WARMUP} warm-up, paths in turn:"
        );
        println!("  (daemons on {} and {})", addrs[0], addrs[1]);
        println!("  in process, Sim on this thread   : {direct:8.1} us");
        println!("  in process, through TwinHandle   : {handle:8.1} us  ({:.2} of Sim)", handle / direct);
        for (transport, tick, state, health, (physics, rest)) in [
            ("TCP 127.0.0.1", tick_tcp, state_tcp, health_tcp, cpu_per_call[0]),
            ("Unix socket  ", tick_unix, state_unix, health_unix, cpu_per_call[1]),
        ] {
            println!(
                "  Tick over gRPC, {transport}    : {tick:8.1} us  ({:.2} of Sim, {:.2} of TwinHandle)",
                tick / direct,
                tick / handle
            );
            println!("    GetRobotState (no physics)     : {state:8.1} us");
            println!("    health check (no twin)         : {health:8.1} us");
            println!(
                "    daemon CPU per round (tick, state, health): physics thread {physics:6.1} us, the rest {rest:6.1} us"
            );
        }
        Ok(())
    })
}
