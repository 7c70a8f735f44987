//! Camera figures of a `Tick`: both cameras at 256x256 and 640x480, at each render quality
//! (asked per request), over gRPC against the `fakesim-hil` binary as users run it (its own
//! process, on TCP 127.0.0.1; raw colour, as the LeRobot plugin asks, and PNG beside it). Raw
//! frames are hundreds of kilobytes, so the client's HTTP/2 receive window matters: the raw
//! paths run on a client with h2's default 64 KiB windows and on one whose windows adapt to
//! the bandwidth-delay product, as grpcio's do by default (BDP probing). Then,
//! in process, both cameras drawn on one render thread against the same drawing shared out to
//! two threads (one camera each, side by side), to show what that gains on this machine.
//!
//! The paths take turns sample by sample, so the machine's load falls on all of them alike.
//! Every tick checks the frames it counts; the daemon checks afterwards that it ran exactly the
//! ticks counted. Run with `cargo bench -p fakesim-hil --bench cameras`.

mod support;

use anyhow::{Context, ensure};
use fakesim_proto::v1::robot_service_client::RobotServiceClient;
use fakesim_proto::v1::{ColorEncoding, GetRobotStateRequest, RenderQuality as Quality, TickRequest};
use fakesim_twin::{RenderQuality, TwinConfig, TwinHandle};
use std::time::{Duration, Instant};
use support::Daemon;
use tonic::transport::{Channel, Endpoint};

const WARMUP: usize = 3;
const SAMPLES: usize = 20;
const SIZES: [(u32, u32); 2] = [(256, 256), (640, 480)];
const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];

/// p50 and p90 of durations, milliseconds.
fn quantiles(samples: &mut [Duration]) -> (f64, f64) {
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize].as_secs_f64() * 1e3;
    (at(0.5), at(0.9))
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// One path over gRPC: a size, a quality, a colour encoding and a client.
struct TickPath {
    size: (u32, u32),
    quality: RenderQuality,
    raw: bool,
    /// On the client with adaptive HTTP/2 windows.
    adaptive: bool,
    took: Vec<Duration>,
    render_ms: Vec<f64>,
    encode_ms: Vec<f64>,
}

impl TickPath {
    fn request(&self, action: &[f64]) -> TickRequest {
        let quality = match self.quality {
            RenderQuality::Fast => Quality::Fast,
            RenderQuality::Full => Quality::Full,
        };
        let encoding = if self.raw {
            ColorEncoding::Raw
        } else {
            ColorEncoding::Png
        };
        TickRequest {
            action: action.to_vec(),
            want_images: true,
            cameras: CAMERAS.map(str::to_owned).to_vec(),
            width: self.size.0,
            height: self.size.1,
            color_encoding: encoding.into(),
            render_quality: Some(quality.into()),
            ..TickRequest::default()
        }
    }

    /// One tick; checks its frames; keeps its times when `keep`.
    async fn tick(
        &mut self,
        robot: &mut RobotServiceClient<Channel>,
        action: &[f64],
        keep: bool,
    ) -> anyhow::Result<()> {
        let request = self.request(action);
        let started = Instant::now();
        let out = robot.tick(request).await?.into_inner();
        let took = started.elapsed();
        ensure!(out.frames.len() == CAMERAS.len(), "{} frames", out.frames.len());
        let (w, h) = self.size;
        for frame in &out.frames {
            ensure!((frame.width, frame.height) == (w, h), "frame size");
            let bytes = if self.raw { &frame.color_raw } else { &frame.color_png };
            ensure!(!bytes.is_empty(), "an empty frame");
            ensure!(!self.raw || bytes.len() == (w * h * 3) as usize, "raw frame length");
        }
        let timing = out.image_timing.context("no image timing")?;
        if keep {
            self.took.push(took);
            self.render_ms.push(timing.render_s * 1e3);
            self.encode_ms.push(timing.encode_s * 1e3);
        }
        Ok(())
    }
}

/// Both cameras drawn in process from one snapshot, on a twin with `threads` render threads.
async fn draw_both(twin: &TwinHandle, size: (u32, u32), quality: RenderQuality) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let shot = twin.snapshot_cameras(&CAMERAS, size.0, size.1, false).await?;
    let frames = twin.draw(shot.at(Some(quality))).await?;
    let took = started.elapsed();
    ensure!(frames.len() == 2 && frames.iter().all(|f| f.rgb.len() == (size.0 * size.1 * 3) as usize));
    Ok(took)
}

async fn over_grpc() -> anyhow::Result<()> {
    let daemon = Daemon::start("127.0.0.1:0", &[]).await?;
    let adaptive = Endpoint::from_shared(format!("http://{}", daemon.addr))?
        .http2_adaptive_window(true)
        .connect()
        .await?;
    let mut clients = [
        RobotServiceClient::new(daemon.channel.clone()),
        RobotServiceClient::new(adaptive),
    ];
    let state = clients[0]
        .get_robot_state(GetRobotStateRequest::default())
        .await?
        .into_inner();
    let (action, start_steps) = (state.ctrl_targets, state.physics_steps);
    let mut paths: Vec<TickPath> = SIZES
        .iter()
        .flat_map(|&size| {
            RenderQuality::ALL.into_iter().flat_map(move |quality| {
                [(true, false), (true, true), (false, false)].map(|(raw, adaptive)| TickPath {
                    size,
                    quality,
                    raw,
                    adaptive,
                    took: Vec::new(),
                    render_ms: Vec::new(),
                    encode_ms: Vec::new(),
                })
            })
        })
        .collect();
    let mut cpu_start = Duration::ZERO;
    for round in 0..WARMUP + SAMPLES {
        if round == WARMUP {
            let (physics, rest) = daemon.physics_and_rest()?;
            cpu_start = physics + rest;
        }
        for path in &mut paths {
            let client = &mut clients[usize::from(path.adaptive)];
            path.tick(client, &action, round >= WARMUP).await?;
        }
    }
    let (physics, rest) = daemon.physics_and_rest()?;
    let cpu_ms = (physics + rest - cpu_start).as_secs_f64() * 1e3 / (SAMPLES * paths.len()) as f64;
    let ticks = ((WARMUP + SAMPLES) * paths.len()) as u64;
    let end = clients[0]
        .get_robot_state(GetRobotStateRequest::default())
        .await?
        .into_inner();
    ensure!(
        end.physics_steps - start_steps == ticks * 10,
        "the daemon ran {} physics steps for {ticks} ticks",
        end.physics_steps - start_steps
    );
    println!(
        "Tick with both cameras over gRPC (TCP 127.0.0.1), p50 of {SAMPLES} after {WARMUP} warm-up, paths in turn:"
    );
    println!("  (the daemon's CPU time, all threads, averaged over every tick timed: {cpu_ms:.1} ms)");
    for path in &mut paths {
        let (p50, p90) = quantiles(&mut path.took);
        let encoding = match (path.raw, path.adaptive) {
            (true, false) => "raw, 64 KiB windows",
            (true, true) => "raw, adaptive windows",
            (false, _) => "PNG, 64 KiB windows",
        };
        println!(
            "  {:>3}x{:<3} {:<4} {encoding:<21}: p50 {p50:7.2} ms  p90 {p90:7.2} ms  {:6.1} ticks/s  (render {:6.2} ms, encode {:5.2} ms)",
            path.size.0,
            path.size.1,
            path.quality.name(),
            1e3 / p50,
            median(&mut path.render_ms),
            median(&mut path.encode_ms),
        );
    }
    Ok(())
}

async fn in_process() -> anyhow::Result<()> {
    let twins = [1, 2].map(|render_threads| {
        TwinHandle::spawn(TwinConfig {
            render_threads,
            ..TwinConfig::default()
        })
    });
    let [one, two] = twins;
    let (one, two) = (one?, two?);
    let combos: Vec<((u32, u32), RenderQuality)> = SIZES
        .iter()
        .flat_map(|&size| RenderQuality::ALL.map(|quality| (size, quality)))
        .collect();
    let mut samples = vec![(Vec::new(), Vec::new()); combos.len()];
    for round in 0..WARMUP + SAMPLES {
        for (&(size, quality), (on_one, on_two)) in combos.iter().zip(&mut samples) {
            let a = draw_both(&one, size, quality).await?;
            let b = draw_both(&two, size, quality).await?;
            if round >= WARMUP {
                on_one.push(a);
                on_two.push(b);
            }
        }
    }
    println!("Both cameras drawn in process, one render thread against two (one camera each), p50 of {SAMPLES}:");
    for ((size, quality), (on_one, on_two)) in combos.iter().zip(&mut samples) {
        let (one_ms, _) = quantiles(on_one);
        let (two_ms, _) = quantiles(on_two);
        println!(
            "  {:>3}x{:<3} {:<4}: one thread {one_ms:7.2} ms, two threads {two_ms:7.2} ms ({:.2} of one)",
            size.0,
            size.1,
            quality.name(),
            two_ms / one_ms
        );
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        over_grpc().await?;
        in_process().await
    })
}
