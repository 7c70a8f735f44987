//! Lens distortion applied to a drawn frame: MuJoCo draws a pinhole image, which is remapped
//! through OpenCV's radial-tangential model (k1, k2, p1, p2, k3) so the frame bends as the
//! user's lens does.
//!
//! No maintained Rust crate remaps an image through this model without bringing OpenCV itself
//! (a C++ build) into the daemon, so the remap is written here: for each pixel of the distorted
//! frame, the undistorted point is found by fixed-point iteration (as OpenCV's
//! `undistortPoints` does) and the pinhole frame is sampled there, bilinearly.

use super::{CameraProfile, Lens};
use crate::render::Frame;

/// Iterations of the fixed-point undistortion; lenses of webcams converge well within it.
const UNDISTORT_ITERATIONS: usize = 20;

/// A camera's distortion, as a map from each pixel of its frame to where the pinhole frame is
/// sampled.
#[derive(Debug, Clone, PartialEq)]
pub struct Distortion {
    width: u32,
    height: u32,
    /// Per pixel, row-major: the column and row of the pinhole frame to sample (pixels).
    source: Vec<[f32; 2]>,
}

impl Distortion {
    /// The map of a profile with a `distortion`; `None` without one.
    pub fn of(profile: &CameraProfile) -> Option<Distortion> {
        let k = profile.distortion?;
        let (width, height) = (profile.width, profile.height);
        let (fx, fy, cx, cy) = match profile.lens() {
            Lens::Pixels { fx, fy, cx, cy } => (fx, fy, cx, cy),
            Lens::Fovy(fovy) => {
                let f = f64::from(height) / 2.0 / (fovy.to_radians() / 2.0).tan();
                (f, f, (f64::from(width) - 1.0) / 2.0, (f64::from(height) - 1.0) / 2.0)
            }
        };
        let mut source = Vec::with_capacity(width as usize * height as usize);
        for row in 0..height {
            for col in 0..width {
                let distorted = ((f64::from(col) - cx) / fx, (f64::from(row) - cy) / fy);
                let (x, y) = undistort(distorted, k);
                source.push([(cx + fx * x) as f32, (cy + fy * y) as f32]);
            }
        }
        Some(Distortion { width, height, source })
    }

    /// Bends a pinhole frame of this camera's size (others are returned as they are); pixels
    /// whose source lies outside the pinhole frame are black, depth there 0.
    pub fn apply(&self, frame: Frame) -> Frame {
        if (frame.width, frame.height) != (self.width, self.height) {
            return frame;
        }
        let (w, h) = (self.width as usize, self.height as usize);
        let mut rgb = vec![0u8; w * h * 3];
        for (i, &[sx, sy]) in self.source.iter().enumerate() {
            let Some(taps) = taps(sx, sy, w, h) else { continue };
            for c in 0..3 {
                let value: f32 = taps
                    .iter()
                    .map(|&(at, weight)| weight * f32::from(frame.rgb[at * 3 + c]))
                    .sum();
                rgb[i * 3 + c] = value.round().clamp(0.0, 255.0) as u8;
            }
        }
        let depth = frame.depth.map(|depth| {
            self.source
                .iter()
                .map(|&[sx, sy]| {
                    let (col, row) = (sx.round(), sy.round());
                    let inside = col >= 0.0 && row >= 0.0 && (col as usize) < w && (row as usize) < h;
                    if inside {
                        depth[row as usize * w + col as usize]
                    } else {
                        0.0
                    }
                })
                .collect()
        });
        Frame { rgb, depth, ..frame }
    }
}

/// The four pixels around (sx, sy) and their bilinear weights; `None` outside the frame.
fn taps(sx: f32, sy: f32, w: usize, h: usize) -> Option<[(usize, f32); 4]> {
    if !(sx >= 0.0 && sy >= 0.0 && sx <= (w - 1) as f32 && sy <= (h - 1) as f32) {
        return None;
    }
    let (x0, y0) = (sx.floor() as usize, sy.floor() as usize);
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    let (ax, ay) = (sx - x0 as f32, sy - y0 as f32);
    Some([
        (y0 * w + x0, (1.0 - ax) * (1.0 - ay)),
        (y0 * w + x1, ax * (1.0 - ay)),
        (y1 * w + x0, (1.0 - ax) * ay),
        (y1 * w + x1, ax * ay),
    ])
}

/// OpenCV's model: where the undistorted normalised point (x, y) lands after the lens.
pub(super) fn distort((x, y): (f64, f64), [k1, k2, p1, p2, k3]: [f64; 5]) -> (f64, f64) {
    let r2 = x * x + y * y;
    let radial = 1.0 + r2 * (k1 + r2 * (k2 + r2 * k3));
    (
        x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x),
        y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y,
    )
}

/// The undistorted normalised point the lens takes to `distorted`, by fixed-point iteration.
pub(super) fn undistort(distorted: (f64, f64), k: [f64; 5]) -> (f64, f64) {
    let mut point = distorted;
    for _ in 0..UNDISTORT_ITERATIONS {
        let (dx, dy) = distort(point, k);
        point = (point.0 + distorted.0 - dx, point.1 + distorted.1 - dy);
    }
    point
}
