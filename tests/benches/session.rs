//! Session figures: a 5 cm move's motion alone (in process, no images), the same move over
//! gRPC with its two 256x256 images, and an observation with two 256x256 images, at each render
//! quality; the observation's images split into drawing and PNG encoding, in process. Each level
//! ends with two ratios of medians from the same run: the observation over gRPC against its
//! parts in process (render + encode), and the move over gRPC against its parts (the motion in
//! process + one observation over gRPC).
//! Run with `cargo bench -p fakesim-e2e --bench session`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_e2e::TestServer;
use fakesim_episode::session::CAMERAS;
use fakesim_episode::{Actuation, SimActuation};
use fakesim_proto::v1::{GetObservationRequest, Images, MoveRequest, ResetTaskRequest, Vec3};
use fakesim_twin::image::encode_rgb_png;
use fakesim_twin::{RenderQuality, TwinConfig, TwinHandle};
use std::time::{Duration, Instant};

const SAMPLES: usize = 40;

/// Prints the p50 and p90 of `samples` and returns the p50 in ms.
fn report(what: &str, mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
    println!(
        "{what:<44} p50 {:>8.2} ms   p90 {:>8.2} ms   (n={})",
        at(0.5),
        at(0.9),
        samples.len()
    );
    at(0.5)
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
        assert!(report.executed_steps > 0, "the move ran");
        ticks.push(report.executed_steps);
    }
    ticks.sort();
    let motion = report("5 cm move, motion only (in process)", motion);
    println!("{:<44} median {} control ticks", "", ticks[ticks.len() / 2]);

    for quality in RenderQuality::ALL {
        let (moved, observed) = grpc_figures(quality).await;
        let (render, encode) = split_figures(quality).await;
        println!(
            "[{quality}] GetObservation ÷ (render + encode in process): {:.2};  Move ÷ (motion + GetObservation): {:.2}",
            observed / (render + encode),
            moved / (motion + observed)
        );
    }
}

/// A 5 cm `Move` and a `GetObservation` over gRPC, each with its two 256x256 PNGs; returns
/// their p50s in ms.
async fn grpc_figures(quality: RenderQuality) -> (f64, f64) {
    let server = TestServer::start_with(|s| {
        s.image_size = 256;
        s.max_steps = 100_000;
        s.render_quality = quality;
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
        let reply = session.r#move(request).await.unwrap().into_inner();
        moves.push(start.elapsed());
        check_pngs(reply.images);
    }
    let moved = report(&format!("[{quality}] 5 cm Move over gRPC with two 256x256 PNGs"), moves);
    let mut observations = Vec::new();
    for _ in 0..SAMPLES {
        let start = Instant::now();
        let reply = session
            .get_observation(GetObservationRequest {})
            .await
            .unwrap()
            .into_inner();
        observations.push(start.elapsed());
        check_pngs(reply.images);
    }
    let observed = report(
        &format!("[{quality}] GetObservation with two 256x256 PNGs"),
        observations,
    );
    server.stop().await.unwrap();
    (moved, observed)
}

/// The two parts of an observation's images, in process: drawing both cameras, then encoding;
/// returns their p50s in ms.
async fn split_figures(quality: RenderQuality) -> (f64, f64) {
    let twin = TwinHandle::spawn(TwinConfig {
        render_quality: quality,
        ..TwinConfig::default()
    })
    .unwrap();
    // The new twin's first frames set up its GL context and buffers; they are not timed.
    twin.render_cameras(&CAMERAS, 256, 256, false).await.unwrap();
    let (mut render, mut encode) = (Vec::new(), Vec::new());
    for _ in 0..SAMPLES {
        let start = Instant::now();
        let frames = twin.render_cameras(&CAMERAS, 256, 256, false).await.unwrap();
        let rendered = Instant::now();
        let pngs: Vec<Vec<u8>> = frames.iter().map(|f| encode_rgb_png(f).unwrap()).collect();
        encode.push(rendered.elapsed());
        render.push(rendered - start);
        assert_eq!(pngs.len(), 2);
    }
    let render = report(&format!("[{quality}]   of which: render both cameras"), render);
    let encode = report(&format!("[{quality}]   of which: PNG encode both"), encode);
    (render, encode)
}

/// Both PNGs are there and are 256x256.
fn check_pngs(images: Option<Images>) {
    let images = images.expect("an observation carries its images");
    for png in [images.agentview, images.robot0_eye_in_hand] {
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(png[16..24], [0, 0, 1, 0, 0, 0, 1, 0], "256x256");
    }
}
