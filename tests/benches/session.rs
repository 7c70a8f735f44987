//! Session figures: a 5 cm move's motion alone (in process, no images), the same move over
//! gRPC with its two 256x256 images, and an observation with two 256x256 images.
//! Run with `cargo bench -p fakesim-e2e --bench session`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::TestServer;
use fakesim_episode::{Actuation, SimActuation};
use fakesim_proto::v1::{GetObservationRequest, MoveRequest, ResetTaskRequest, Vec3};
use fakesim_twin::{TwinConfig, TwinHandle};
use std::time::{Duration, Instant};

const SAMPLES: usize = 40;

fn report(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
    println!(
        "{what:<44} p50 {:>8.2} ms   p90 {:>8.2} ms   (n={})",
        at(0.5),
        at(0.9),
        samples.len()
    );
}

fn five_cm(i: usize) -> [f64; 3] {
    [0.0, if i.is_multiple_of(2) { 0.05 } else { -0.05 }, 0.0]
}

#[tokio::main]
async fn main() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let mut motion = Vec::new();
    let mut ticks = Vec::new();
    for i in 0..SAMPLES {
        let start = Instant::now();
        let report = SimActuation
            .run_move(&twin, five_cm(i), None, 30, u64::MAX)
            .await
            .unwrap();
        motion.push(start.elapsed());
        ticks.push(report.executed_steps);
    }
    ticks.sort();
    report("5 cm move, motion only (in process)", motion);
    println!("{:<44} median {} control ticks", "", ticks[ticks.len() / 2]);

    let server = TestServer::start_with(|s| {
        s.image_size = 256;
        s.max_steps = 100_000;
    })
    .await
    .unwrap();
    let mut session = server.session().await.unwrap();
    session.reset_task(ResetTaskRequest::default()).await.unwrap();
    let mut moves = Vec::new();
    for i in 0..SAMPLES {
        let [x, y, z] = five_cm(i);
        let request = MoveRequest {
            delta_xyz: Some(Vec3 { x, y, z }),
            delta_rpy: None,
        };
        let start = Instant::now();
        session.r#move(request).await.unwrap();
        moves.push(start.elapsed());
    }
    report("5 cm Move over gRPC with two 256x256 PNGs", moves);
    let mut observations = Vec::new();
    for _ in 0..SAMPLES {
        let start = Instant::now();
        session.get_observation(GetObservationRequest {}).await.unwrap();
        observations.push(start.elapsed());
    }
    report("GetObservation with two 256x256 PNGs", observations);
    server.stop().await.unwrap();
}
