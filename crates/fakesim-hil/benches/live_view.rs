//! What the live view costs a tick: `Tick` round trips to two daemons side by side, one without
//! the live view and one saving it (`--live-view save=...`, every tick logged: the arm in 3D,
//! the joints, the TCP path), over Unix domain sockets, first outside an episode and then inside
//! one (where each `Tick` is also a journal line the live view logs). The two daemons take turns
//! sample by sample, in alternating order, so the machine's load falls on both alike; the CPU
//! time of each daemon's physics thread, its `live-view` thread and the rest is read per tick.
//!
//! Run with `cargo bench -p fakesim-hil --features live-view --bench live_view`.

mod support;

use anyhow::ensure;
use fakesim_proto::v1::TickRequest;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::session_service_client::SessionServiceClient;
use fakesim_proto::v1::{GetRobotStateRequest, ResetTaskRequest};
use std::time::Duration;
use support::{Daemon, median_us, timed};
use tonic::transport::Channel;

const WARMUP: usize = 100;
const SAMPLES: usize = 2000;
/// The threads whose CPU time is read apart from the rest.
const THREADS: [&str; 2] = ["twin-physics", "live-view"];

/// One daemon's client and what it measured.
struct Side {
    daemon: Daemon,
    robot: RobotServiceClient<Channel>,
    samples: Vec<Duration>,
    cpu_at_start: ([Duration; 2], Duration),
}

impl Side {
    async fn start(socket: &str, extra: &[&str]) -> anyhow::Result<Self> {
        let daemon = Daemon::start(&format!("unix:{socket}"), extra).await?;
        let robot = RobotServiceClient::new(daemon.channel.clone());
        Ok(Side {
            cpu_at_start: daemon.cpu(THREADS)?,
            daemon,
            robot,
            samples: Vec::with_capacity(SAMPLES),
        })
    }

    async fn tick(&mut self, action: &[f64], timed_sample: bool) -> anyhow::Result<()> {
        let request = TickRequest {
            action: action.to_vec(),
            ..Default::default()
        };
        let mut one = Vec::new();
        timed(&mut one, async { Ok(self.robot.tick(request).await?) }).await?;
        if timed_sample {
            self.samples.extend(one);
        }
        Ok(())
    }

    /// Starts measuring: clears the samples and reads the CPU times.
    fn restart(&mut self) -> anyhow::Result<()> {
        self.samples.clear();
        self.cpu_at_start = self.daemon.cpu(THREADS)?;
        Ok(())
    }

    /// The median tick (us) and the CPU per tick (us) of the physics thread, the live-view
    /// thread and the rest since [`Side::restart`].
    fn report(&self) -> anyhow::Result<(f64, [f64; 3])> {
        let ([physics, live], rest) = self.daemon.cpu(THREADS)?;
        let ([physics0, live0], rest0) = self.cpu_at_start;
        let per = |used: Duration| used.as_secs_f64() * 1e6 / SAMPLES as f64;
        Ok((
            median_us(self.samples.clone()),
            [per(physics - physics0), per(live - live0), per(rest - rest0)],
        ))
    }
}

/// Ticks both sides in turn, `WARMUP` untimed then `SAMPLES` timed, alternating who goes first.
async fn run(sides: &mut [Side; 2], action: &[f64]) -> anyhow::Result<()> {
    for i in 0..WARMUP + SAMPLES {
        if i == WARMUP {
            for side in sides.iter_mut() {
                side.restart()?;
            }
        }
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for k in order {
            sides[k].tick(action, i >= WARMUP).await?;
        }
    }
    Ok(())
}

fn print(what: &str, sides: &[Side; 2]) -> anyhow::Result<()> {
    let (off, [off_physics, _, off_rest]) = sides[0].report()?;
    let (on, [on_physics, on_live, on_rest]) = sides[1].report()?;
    println!("{what}: median of {SAMPLES} ticks after {WARMUP} warm-up, the two daemons in turn");
    println!(
        "  live view off : {off:8.1} us   daemon CPU per tick: physics {off_physics:5.1} us, rest {off_rest:5.1} us"
    );
    println!(
        "  live view on  : {on:8.1} us   daemon CPU per tick: physics {on_physics:5.1} us, live-view {on_live:5.1} us, rest {on_rest:5.1} us"
    );
    println!("  on / off      : {:8.3}", on / off);
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let recording = dir.path().join("bench.rrd");
        let live = format!("save={}", recording.display());
        let budget = ["--max-steps", "100000"];
        let mut sides = [
            Side::start(&dir.path().join("off.sock").display().to_string(), &budget).await?,
            Side::start(
                &dir.path().join("on.sock").display().to_string(),
                &[&budget[..], &["--live-view", &live]].concat(),
            )
            .await?,
        ];
        let action = sides[0]
            .robot
            .get_robot_state(GetRobotStateRequest::default())
            .await?
            .into_inner()
            .ctrl_targets;
        run(&mut sides, &action).await?;
        print("Tick outside an episode", &sides)?;
        for side in &sides {
            SessionServiceClient::new(side.daemon.channel.clone())
                .reset_task(ResetTaskRequest::default())
                .await?;
        }
        run(&mut sides, &action).await?;
        print("Tick in an episode (each one a journal line too)", &sides)?;
        let size = std::fs::metadata(&recording)?.len();
        ensure!(size > 0, "the live view wrote nothing");
        println!("  recording written so far: {:.1} MB", size as f64 / 1e6);
        Ok(())
    })
}
