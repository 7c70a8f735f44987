//! State reads while other clients render: 16 clients loop `GetObservation` (two 256x256
//! images each) while 16 others loop `GetSessionInfo` and `GetRobotState`, for 60 s
//! (`FAKESIM_BENCH_SECS` shortens it). The same readers alone, in the same run, give the ratio.
//! Run with `cargo bench -p fakesim-e2e --bench reads_under_renders`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::TestServer;
use fakesim_proto::v1::{GetObservationRequest, GetRobotStateRequest, GetSessionInfoRequest, ResetTaskRequest};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const CLIENTS: usize = 32;

/// Read latencies of one phase: session info and robot state.
#[derive(Default)]
struct Reads {
    session_info: Vec<Duration>,
    robot_state: Vec<Duration>,
}

fn quantile(samples: &mut [Duration], q: f64) -> f64 {
    samples.sort();
    let i = ((samples.len().saturating_sub(1)) as f64 * q).round() as usize;
    samples.get(i).map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
}

fn report(phase: &str, mut reads: Reads) -> (f64, f64) {
    let info = (
        quantile(&mut reads.session_info, 0.5),
        quantile(&mut reads.session_info, 0.99),
    );
    let robot = (
        quantile(&mut reads.robot_state, 0.5),
        quantile(&mut reads.robot_state, 0.99),
    );
    println!(
        "{phase:<34} GetSessionInfo p50 {:>7.2} ms p99 {:>7.2} ms (n={})   GetRobotState p50 {:>7.2} ms p99 {:>7.2} ms (n={})",
        info.0,
        info.1,
        reads.session_info.len(),
        robot.0,
        robot.1,
        reads.robot_state.len()
    );
    info
}

/// Runs `readers` reading clients, and `renderers` clients looping `GetObservation`, for `span`.
async fn phase(server: &TestServer, readers: usize, renderers: usize, span: Duration) -> (Reads, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let observations = Arc::new(AtomicU64::new(0));
    let mut render_tasks = Vec::new();
    for _ in 0..renderers {
        let mut session = server.session().await.unwrap();
        let (stop, observations) = (stop.clone(), observations.clone());
        render_tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let images = session
                    .get_observation(GetObservationRequest::default())
                    .await
                    .unwrap()
                    .into_inner()
                    .images
                    .unwrap();
                assert!(!images.agentview.is_empty());
                observations.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let mut read_tasks = Vec::new();
    for _ in 0..readers {
        let mut session = server.session().await.unwrap();
        let mut robot = server.robot().await.unwrap();
        let stop = stop.clone();
        read_tasks.push(tokio::spawn(async move {
            let mut reads = Reads::default();
            while !stop.load(Ordering::Relaxed) {
                let start = Instant::now();
                let info = session.get_session_info(GetSessionInfoRequest {}).await.unwrap();
                reads.session_info.push(start.elapsed());
                assert!(info.into_inner().run.is_some());
                let start = Instant::now();
                robot.get_robot_state(GetRobotStateRequest::default()).await.unwrap();
                reads.robot_state.push(start.elapsed());
            }
            reads
        }));
    }
    tokio::time::sleep(span).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = Reads::default();
    for task in read_tasks {
        let reads = task.await.unwrap();
        all.session_info.extend(reads.session_info);
        all.robot_state.extend(reads.robot_state);
    }
    for task in render_tasks {
        task.await.unwrap();
    }
    (all, observations.load(Ordering::Relaxed))
}

#[tokio::main]
async fn main() {
    let secs: u64 = std::env::var("FAKESIM_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let span = Duration::from_secs(secs);
    let server = TestServer::start_with(|s| s.image_size = 256).await.unwrap();
    server
        .session()
        .await
        .unwrap()
        .reset_task(ResetTaskRequest::default())
        .await
        .unwrap();
    let readers = CLIENTS / 2;
    let (alone, _) = phase(&server, readers, 0, span).await;
    let alone = report(&format!("{readers} readers alone, {secs} s"), alone);
    let (loaded, observations) = phase(&server, readers, CLIENTS - readers, span).await;
    let loaded = report(
        &format!("{readers} readers + {} renderers, {secs} s", CLIENTS - readers),
        loaded,
    );
    println!(
        "{:<34} {observations} observations rendered; GetSessionInfo p99 under renders / alone: {:.2}",
        "",
        loaded.1 / alone.1
    );
    server.stop().await.unwrap();
}
