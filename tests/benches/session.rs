//! Session figures at each render quality: a 5 cm `Move` over gRPC with its two 256x256 images,
//! a `GetObservation` with two 256x256 images, and, in process on a twin of its own, the parts
//! they are made of: the move's motion alone (no images), drawing both cameras, and their PNG
//! encoding. The five take turns sample by sample, so the shared machine's load falls on all of
//! them alike; each level ends with two ratios of their medians: the observation over gRPC
//! against its parts in process (render + encode), and the move over gRPC against its parts
//! (motion + one observation over gRPC).
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
        "{what:<48} p50 {:>8.2} ms   p90 {:>8.2} ms   (n={})",
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
    for quality in RenderQuality::ALL {
        figures(quality).await;
    }
}

/// Times every path at one render quality, in turn, and prints them with the ratios.
async fn figures(quality: RenderQuality) {
    let server = TestServer::start_with(|s| {
        s.image_size = 256;
        s.max_steps = 100_000;
        s.render_quality = quality;
    })
    .await
    .unwrap();
    let mut session = server.session().await.unwrap();
    session.reset_task(ResetTaskRequest::default()).await.unwrap();
    let twin = TwinHandle::spawn(TwinConfig {
        render_quality: quality,
        ..TwinConfig::default()
    })
    .unwrap();
    // The new twin's first frames set up its GL context and buffers; they are not timed.
    twin.render_cameras(&CAMERAS, 256, 256, false).await.unwrap();

    let [mut moves, mut observations, mut motion, mut render, mut encode] = [(); 5].map(|()| Vec::new());
    let mut ticks = Vec::new();
    for i in 0..SAMPLES {
        let [x, y, z] = five_cm(i);
        let request = MoveRequest {
            delta_xyz: Some(Vec3 { x, y, z }),
            delta_rpy: None,
            ..Default::default()
        };
        let start = Instant::now();
        let reply = session.r#move(request).await.unwrap().into_inner();
        moves.push(start.elapsed());
        check_pngs(reply.images);

        let start = Instant::now();
        let reply = session
            .get_observation(GetObservationRequest::default())
            .await
            .unwrap()
            .into_inner();
        observations.push(start.elapsed());
        check_pngs(reply.images);

        let start = Instant::now();
        let moved = SimActuation
            .run_move(&twin, five_cm(i), None, 30, u64::MAX)
            .await
            .unwrap();
        motion.push(start.elapsed());
        assert!(moved.executed_steps > 0, "the move ran");
        ticks.push(moved.executed_steps);

        let start = Instant::now();
        let frames = twin.render_cameras(&CAMERAS, 256, 256, false).await.unwrap();
        let rendered = Instant::now();
        let pngs: Vec<Vec<u8>> = frames.iter().map(|f| encode_rgb_png(f).unwrap()).collect();
        encode.push(rendered.elapsed());
        render.push(rendered - start);
        assert_eq!(pngs.len(), 2);
    }
    server.stop().await.unwrap();

    let moved = report(&format!("[{quality}] 5 cm Move over gRPC with two 256x256 PNGs"), moves);
    let observed = report(
        &format!("[{quality}] GetObservation with two 256x256 PNGs"),
        observations,
    );
    let motion = report(&format!("[{quality}] 5 cm move, motion only (in process)"), motion);
    ticks.sort();
    println!("{:<48} median {} control ticks", "", ticks[ticks.len() / 2]);
    let render = report(&format!("[{quality}] render both cameras (in process)"), render);
    let encode = report(&format!("[{quality}] PNG encode both (in process)"), encode);
    println!(
        "[{quality}] GetObservation ÷ (render + encode in process): {:.2};  Move ÷ (motion + GetObservation): {:.2}",
        observed / (render + encode),
        moved / (motion + observed)
    );
}

/// Both PNGs are there and are 256x256.
fn check_pngs(images: Option<Images>) {
    let images = images.expect("an observation carries its images");
    for png in [images.agentview, images.robot0_eye_in_hand] {
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(png[16..24], [0, 0, 1, 0, 0, 0, 1, 0], "256x256");
    }
}
