//! `TickChunk` of 8 over gRPC against the same 8 ticks in process, per tick: the way past a
//! round trip per tick for clients that act in chunks. Each tick writes the six setpoints and
//! runs `substeps_per_tick` physics steps, no images.
//!
//! The daemon is the `fakesim-hil` binary in a process of its own on TCP 127.0.0.1, the client
//! this process on a current-thread runtime. The paths take turns chunk by chunk: 8 ticks on a
//! `Sim` on this thread, 8 ticks through a `TwinHandle` (one hand-off to its physics thread per
//! tick), one `TickChunk` of 8, and 8 `Tick` calls. The daemon checks afterwards that it ran
//! exactly the ticks its client counted.
//!
//! Run with `cargo bench -p fakesim-hil --bench chunk`. Prints the median per tick of each path
//! and the ratios.

mod support;

use anyhow::ensure;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::{GetRobotStateRequest, TickChunkRequest, TickRequest};
use fakesim_twin::sim::DEFAULT_SUBSTEPS_PER_TICK;
use fakesim_twin::{JointValues, Scene, Sim, TwinConfig, TwinHandle};
use std::time::{Duration, Instant};
use support::Daemon;

const CHUNK: usize = 8;
const WARMUP: usize = 20;
// Rounds measured: 2 000 (about 30 s) steady the medians on a shared host, where 300 rounds
// moved the ratios by a tenth from run to run.
const SAMPLES: usize = 2000;

fn median_per_tick_us(mut samples: Vec<Duration>) -> f64 {
    samples.sort_unstable();
    samples[samples.len() / 2].as_secs_f64() * 1e6 / CHUNK as f64
}

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut sim = Sim::load(&Scene::Tabletop, DEFAULT_SUBSTEPS_PER_TICK)?;
        let values = sim.arm_ctrl().to_vec();
        let action = JointValues::Ordered(values.clone());
        let twin = TwinHandle::spawn(TwinConfig::default())?;
        let daemon = Daemon::start("127.0.0.1:0", &[]).await?;
        let mut robot = RobotServiceClient::new(daemon.channel.clone());
        let steps_at = |robot: &mut RobotServiceClient<_>| {
            let mut robot = robot.clone();
            async move {
                let state = robot.get_robot_state(GetRobotStateRequest::default()).await?;
                anyhow::Ok(state.into_inner().physics_steps)
            }
        };
        let start_steps = steps_at(&mut robot).await?;
        let tick = || TickRequest {
            action: values.clone(),
            ..Default::default()
        };

        let mut samples: [Vec<Duration>; 4] = std::array::from_fn(|_| Vec::with_capacity(SAMPLES));
        let mut cpu_start = (Duration::ZERO, Duration::ZERO);
        for i in 0..WARMUP + SAMPLES {
            if i == WARMUP {
                cpu_start = daemon.physics_and_rest()?;
            }
            let mut round = [Duration::ZERO; 4];
            let start = Instant::now();
            for _ in 0..CHUNK {
                sim.send_action(&action, DEFAULT_SUBSTEPS_PER_TICK)?;
                std::hint::black_box(sim.robot_state());
            }
            round[0] = start.elapsed();
            let start = Instant::now();
            for _ in 0..CHUNK {
                let action = action.clone();
                twin.try_with_sim(move |sim| {
                    sim.send_action(&action, sim.substeps_per_tick())?;
                    Ok(sim.robot_state())
                })
                .await?;
            }
            round[1] = start.elapsed();
            let start = Instant::now();
            let chunk = TickChunkRequest {
                ticks: (0..CHUNK).map(|_| tick()).collect(),
            };
            let answer = robot.tick_chunk(chunk).await?.into_inner();
            ensure!(answer.ticks.len() == CHUNK && answer.stopped.is_none(), "a whole chunk");
            round[2] = start.elapsed();
            let start = Instant::now();
            for _ in 0..CHUNK {
                robot.tick(tick()).await?;
            }
            round[3] = start.elapsed();
            if i >= WARMUP {
                for (all, one) in samples.iter_mut().zip(round) {
                    all.push(one);
                }
            }
        }
        let (physics, rest) = daemon.physics_and_rest()?;
        // Per tick of the daemon's: a chunk's and the 8 Tick calls' of every round.
        let per_tick = |used: Duration| used.as_secs_f64() * 1e6 / (2 * CHUNK * SAMPLES) as f64;
        let (physics, rest) = (per_tick(physics - cpu_start.0), per_tick(rest - cpu_start.1));
        let ticks = (2 * CHUNK * (WARMUP + SAMPLES)) as u64;
        let ran = steps_at(&mut robot).await? - start_steps;
        ensure!(
            ran == ticks * u64::from(DEFAULT_SUBSTEPS_PER_TICK),
            "the daemon ran {ran} physics steps for {ticks} ticks"
        );
        let [direct, handle, chunked, one_by_one] = samples.map(median_per_tick_us);
        println!(
            "{CHUNK} ticks of {DEFAULT_SUBSTEPS_PER_TICK} physics steps, no images; median per tick of {SAMPLES} rounds after {WARMUP}, paths in turn (daemon on {}):",
            daemon.addr
        );
        println!("  in process, Sim on this thread       : {direct:8.1} us");
        println!("  in process, through TwinHandle       : {handle:8.1} us  ({:.2} of Sim)", handle / direct);
        println!(
            "  TickChunk of {CHUNK} over gRPC (TCP)      : {chunked:8.1} us  ({:.2} of Sim, {:.2} of TwinHandle)",
            chunked / direct,
            chunked / handle
        );
        println!(
            "  {CHUNK} Tick calls over gRPC (TCP)        : {one_by_one:8.1} us  ({:.2} of Sim, {:.2} of TwinHandle)",
            one_by_one / direct,
            one_by_one / handle
        );
        println!("  daemon CPU per tick, both gRPC paths  : physics thread {physics:6.1} us, the rest {rest:6.1} us");
        Ok(())
    })
}
