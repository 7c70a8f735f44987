//! What a backdrop costs: both cameras drawn in one call by a twin without backdrops and by one
//! with a backdrop behind each camera (the second, mask pass and the composite), at 256x256
//! and 640x480, fast and full. Rounds take turns between the two twins. Run with
//! `cargo bench -p fakesim-twin --bench backdrop`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::{Backdrop, RenderQuality, TwinConfig, TwinHandle};
use std::path::Path;
use std::time::Instant;

const FRAMES: u32 = 20;
const ROUNDS: usize = 5;
const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];
const SIZES: [(u32, u32); 2] = [(256, 256), (640, 480)];

/// Median of the samples.
fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// A twin at `quality`, with a `width` x `height` photo of noise behind both cameras when `photo`.
fn twin(dir: &Path, quality: RenderQuality, (width, height): (u32, u32), photo: bool) -> TwinHandle {
    let backdrops = if photo {
        let path = dir.join(format!("{width}x{height}.png"));
        image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x * 13) as u8, (y * 7) as u8, (x ^ y) as u8])
        })
        .save(&path)
        .unwrap();
        CAMERAS
            .iter()
            .map(|camera| Backdrop::open(camera, &path).unwrap())
            .collect()
    } else {
        Vec::new()
    };
    TwinHandle::spawn(TwinConfig {
        render_quality: quality,
        backdrops,
        ..TwinConfig::default()
    })
    .unwrap()
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    println!("medians of {ROUNDS} rounds of {FRAMES} calls drawing both cameras");
    println!(
        "{:<8} {:<10} {:>14} {:>16} {:>18}",
        "quality", "size", "plain, ms", "backdrop, ms", "extra per frame"
    );
    for quality in RenderQuality::ALL {
        for size in SIZES {
            let twins = [false, true].map(|photo| twin(dir.path(), quality, size, photo));
            let mut times = [Vec::new(), Vec::new()];
            for twin in &twins {
                // The first frame builds the GL context and fits the photo.
                twin.render_cameras(&CAMERAS, size.0, size.1, false).await.unwrap();
            }
            for _ in 0..ROUNDS {
                for (twin, times) in twins.iter().zip(&mut times) {
                    let start = Instant::now();
                    for _ in 0..FRAMES {
                        let frames = twin.render_cameras(&CAMERAS, size.0, size.1, false).await.unwrap();
                        assert_eq!(frames.len(), CAMERAS.len());
                    }
                    times.push(start.elapsed().as_secs_f64() * 1e3 / f64::from(FRAMES));
                }
            }
            let [plain, backdrop] = times.map(median);
            println!(
                "{:<8} {:<10} {plain:>14.2} {backdrop:>16.2} {:>15.2} ms",
                quality.name(),
                format!("{}x{}", size.0, size.1),
                (backdrop - plain) / CAMERAS.len() as f64
            );
        }
    }
}
