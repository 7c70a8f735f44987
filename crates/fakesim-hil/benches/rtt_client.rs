//! The Rust client's round trip against a running daemon, for benches that compare another
//! client with it on the same daemon in the same run (`python/bench/client_round_trip.py`):
//! `cargo bench -p fakesim-hil --bench rtt_client -- ADDRESS N` times N `Tick` calls (the targets in force, no images) and N
//! `GetRobotState` calls, taking turns, on a current-thread runtime as a single-threaded client
//! is, and prints the two medians in microseconds as `tick_us state_us`. ADDRESS is
//! `HOST:PORT` or `unix:PATH`.

mod support;

use anyhow::Context;
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::{GetRobotStateRequest, TickRequest};
use support::{connect, median_us, timed};

fn main() -> anyhow::Result<()> {
    // cargo bench adds `--bench`; the rest are ours.
    let mut args = std::env::args().skip(1).filter(|arg| !arg.starts_with("--"));
    let address = args.next().context("usage: rtt_client ADDRESS N")?;
    let n: usize = args.next().context("usage: rtt_client ADDRESS N")?.parse()?;
    anyhow::ensure!(n > 0, "N must be positive");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut robot = RobotServiceClient::new(connect(&address).await?);
        let action = robot
            .get_robot_state(GetRobotStateRequest::default())
            .await?
            .into_inner()
            .ctrl_targets;
        let (mut ticks, mut states) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for _ in 0..n {
            let request = TickRequest {
                action: action.clone(),
                ..TickRequest::default()
            };
            timed(&mut ticks, async { Ok(robot.tick(request).await?) }).await?;
            let request = GetRobotStateRequest::default();
            timed(&mut states, async { Ok(robot.get_robot_state(request).await?) }).await?;
        }
        println!("{:.1} {:.1}", median_us(ticks), median_us(states));
        Ok(())
    })
}
