//! The look of each camera at the start state, compared with a reference taken from the
//! renderer when the SO-101's published meshes went to a twentieth of their triangles (stop 49;
//! the tenth's reference differed by 0.18 on average, 33 in one block): a 32x32 grid of 8x8 block means of the 256x256 frame,
//! stored as a small PNG per camera in `tests/reference/`. Set `FAKESIM_WRITE_REFERENCE=1` to
//! write the grids from the current code instead of checking them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fakesim_twin::{Frame, RenderQuality, TwinConfig, TwinHandle};
use std::path::PathBuf;

const SIZE: u32 = 256;
const BLOCK: u32 = 8;
const GRID: u32 = SIZE / BLOCK;
const CAMERAS: [&str; 2] = ["agentview", "robot0_eye_in_hand"];

#[tokio::test]
async fn todays_look_matches_the_reference() {
    let twin = TwinHandle::spawn(TwinConfig::default()).unwrap();
    let frames = twin.render_cameras(&CAMERAS, SIZE, SIZE, false).await.unwrap();
    for (camera, frame) in CAMERAS.into_iter().zip(frames) {
        let grid = block_means(&frame);
        let path = reference_path(camera);
        if std::env::var_os("FAKESIM_WRITE_REFERENCE").is_some() {
            write_grid(&path, &grid);
            continue;
        }
        let reference = read_grid(&path);
        let (mean, max) = difference(&grid, &reference);
        println!("{camera}: full vs reference: mean {mean:.2}, max {max:.0}");
        assert!(
            mean <= 1.0 && max <= 12.0,
            "{camera}: block means differ from the reference by {mean:.2} on average, {max:.0} at most"
        );
    }
}

/// The fast level draws the same scene: the same colours in the same places, without shadows,
/// reflections and smoothed edges.
#[tokio::test]
async fn the_fast_level_shows_the_same_scene() {
    let twin = TwinHandle::spawn(TwinConfig {
        render_quality: RenderQuality::Fast,
        ..TwinConfig::default()
    })
    .unwrap();
    let frames = twin.render_cameras(&CAMERAS, SIZE, SIZE, false).await.unwrap();
    for (camera, frame) in CAMERAS.into_iter().zip(frames) {
        let (mean, max) = difference(&block_means(&frame), &read_grid(&reference_path(camera)));
        println!("{camera}: fast vs reference: mean {mean:.2}, max {max:.0}");
        assert!(
            mean <= 4.0 && max > 0.0,
            "{camera}: block means differ from the reference by {mean:.2} on average, {max:.0} at most"
        );
    }
}

fn reference_path(camera: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(format!("{camera}_32.png"))
}

/// Mean of each 8x8 block, per channel, rounded.
fn block_means(frame: &Frame) -> Vec<u8> {
    assert_eq!((frame.width, frame.height), (SIZE, SIZE));
    let mut out = Vec::with_capacity((GRID * GRID * 3) as usize);
    for by in 0..GRID {
        for bx in 0..GRID {
            for channel in 0..3 {
                let mut sum = 0u32;
                for y in by * BLOCK..(by + 1) * BLOCK {
                    for x in bx * BLOCK..(bx + 1) * BLOCK {
                        sum += u32::from(frame.rgb[((y * SIZE + x) * 3 + channel) as usize]);
                    }
                }
                out.push(((sum + BLOCK * BLOCK / 2) / (BLOCK * BLOCK)) as u8);
            }
        }
    }
    out
}

/// Mean and largest absolute difference between two grids, in 8-bit levels.
fn difference(a: &[u8], b: &[u8]) -> (f64, f64) {
    assert_eq!(a.len(), b.len());
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| f64::from(x.abs_diff(*y))).collect();
    let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
    (mean, diffs.iter().copied().fold(0.0, f64::max))
}

fn write_grid(path: &PathBuf, grid: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = std::fs::File::create(path).unwrap();
    let mut encoder = png::Encoder::new(file, GRID, GRID);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(grid).unwrap();
}

fn read_grid(path: &PathBuf) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    buf
}
