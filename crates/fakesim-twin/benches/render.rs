//! Camera figures at each render quality: one 256x256 RGB frame per camera, both cameras in one
//! call, and PNG encoding apart from drawing. With `FAKESIM_BENCH_PYTHON` naming a Python that
//! has `mujoco==3.17.0` (see `scripts/bench/side-by-side`), MuJoCo's own Python `Renderer`
//! draws the same scene at the same size and settings between our rounds, in the same run.
//! Every line checks the frames it counts. Run with `cargo bench -p fakesim-twin --bench render`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::image::encode_rgb_png;
use fakesim_twin::{Frame, RenderQuality, TwinConfig, TwinHandle};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const SIZE: u32 = 256;
const FRAMES: u32 = 20;
const ROUNDS: usize = 3;
const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];

/// Samples of ours and of the Python renderer, in milliseconds.
type Samples = (Vec<f64>, Vec<f64>);

/// Median of the samples, in milliseconds.
fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn per_frame(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3 / f64::from(FRAMES)
}

fn check_frames(what: &str, frames: &[Frame], count: usize) {
    assert_eq!(frames.len(), count, "{what}: frame count");
    for f in frames {
        let expected = (SIZE, SIZE, (SIZE * SIZE * 3) as usize);
        assert_eq!((f.width, f.height, f.rgb.len()), expected, "{what}");
        assert!(f.rgb.iter().any(|&b| b != f.rgb[0]), "{what}: a uniform frame");
    }
}

/// Times `FRAMES` calls of one camera, or of both cameras together.
async fn ours(twin: &TwinHandle, cameras: &[&str]) -> (f64, Vec<Frame>) {
    let mut last = Vec::new();
    let start = Instant::now();
    for _ in 0..FRAMES {
        last = twin.render_cameras(cameras, SIZE, SIZE, false).await.unwrap();
    }
    let ms = per_frame(start.elapsed());
    check_frames(&cameras.join("+"), &last, cameras.len());
    (ms, last)
}

/// MuJoCo's Python renderer at one quality: milliseconds per frame by camera.
fn python(interpreter: &str, quality: RenderQuality) -> BTreeMap<String, f64> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let output = Command::new(interpreter)
        .arg(root.join("scripts/bench/render_mujoco.py"))
        .arg(root.join("assets/so101/tabletop.xml"))
        .args([SIZE.to_string(), FRAMES.to_string(), quality.name().to_owned()])
        .output()
        .expect("cannot run the Python renderer");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    let times: BTreeMap<String, f64> = text
        .lines()
        .filter_map(|line| match line.split_whitespace().collect::<Vec<_>>()[..] {
            ["python", q, camera, ms] if q == quality.name() => Some((camera.to_owned(), ms.parse().ok()?)),
            _ => None,
        })
        .collect();
    assert_eq!(times.len(), CAMERAS.len(), "Python printed {text}");
    times
}

#[tokio::main]
async fn main() {
    let interpreter = std::env::var("FAKESIM_BENCH_PYTHON").ok();
    let mut rows: BTreeMap<(&str, String), Samples> = BTreeMap::new();
    // Both cameras in one call: render and encode samples.
    let mut both: BTreeMap<&str, Samples> = BTreeMap::new();
    let twins: Vec<(RenderQuality, TwinHandle)> = RenderQuality::ALL
        .into_iter()
        .map(|quality| {
            let config = TwinConfig {
                render_quality: quality,
                ..TwinConfig::default()
            };
            (quality, TwinHandle::spawn(config).unwrap())
        })
        .collect();
    for (quality, twin) in &twins {
        // The first frame builds the GL context.
        if let Err(e) = twin.render(CAMERAS[0], SIZE, SIZE, false).await {
            println!("render at {quality}: {e}");
            return;
        }
    }
    for _ in 0..ROUNDS {
        for (quality, twin) in &twins {
            for camera in CAMERAS {
                let (ms, _) = ours(twin, &[camera]).await;
                rows.entry((quality.name(), camera.to_owned())).or_default().0.push(ms);
            }
            let (ms, frames) = ours(twin, &CAMERAS).await;
            let start = Instant::now();
            for _ in 0..FRAMES {
                for frame in &frames {
                    assert!(encode_rgb_png(frame).unwrap().starts_with(b"\x89PNG"));
                }
            }
            let entry = both.entry(quality.name()).or_default();
            entry.0.push(ms);
            entry.1.push(per_frame(start.elapsed()));
            if let Some(interpreter) = &interpreter {
                for (camera, ms) in python(interpreter, *quality) {
                    rows.entry((quality.name(), camera)).or_default().1.push(ms);
                }
            }
        }
    }
    println!("{SIZE}x{SIZE} RGB, medians of {ROUNDS} rounds of {FRAMES} frames, ms per frame");
    println!(
        "{:<5} {:<19} {:>8} {:>12} {:>7}",
        "level", "camera", "ours", "MuJoCo py", "ratio"
    );
    for ((quality, camera), (mut ours, mut theirs)) in rows {
        let ours = median(&mut ours);
        if theirs.is_empty() {
            println!("{quality:<5} {camera:<19} {ours:>8.2} {:>12} {:>7}", "-", "-");
        } else {
            let theirs = median(&mut theirs);
            println!(
                "{quality:<5} {camera:<19} {ours:>8.2} {theirs:>12.2} {:>7.2}",
                ours / theirs
            );
        }
    }
    for (quality, (mut render, mut encode)) in both {
        println!(
            "{quality:<5} both cameras in one call: render {:.2} ms + PNG encode {:.2} ms",
            median(&mut render),
            median(&mut encode)
        );
    }
}
