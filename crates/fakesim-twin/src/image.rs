//! PNG encoding of rendered frames (colour as 8-bit RGB, depth as 16-bit millimetre codes), and
//! the reading of the images a user's files name (backdrops, boards).

use crate::render::Frame;
use image::{ImageReader, Limits, RgbImage};
use std::path::Path;
use std::time::Instant;
use thiserror::Error;

/// A frame that could not be encoded.
#[derive(Debug, Error)]
#[error("PNG encoding failed: {0}")]
pub struct EncodeError(String);

/// Reads a PNG or JPEG file (the format from its bytes) of at most `max_side` pixels a side as
/// RGB; the error says why it cannot be used, calling the picture `what` ("photo", "image").
pub(crate) fn read_rgb(path: &Path, max_side: u32, what: &str) -> Result<RgbImage, String> {
    let mut reader = ImageReader::open(path)
        .map_err(|e| e.to_string())?
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(max_side);
    limits.max_image_height = Some(max_side);
    reader.limits(limits);
    let image = reader
        .decode()
        .map_err(|e| format!("{e} (a PNG or JPEG {what}, at most {max_side} pixels a side)"))?
        .into_rgb8();
    if image.width() == 0 || image.height() == 0 {
        return Err(format!("the {what} has no pixels"));
    }
    Ok(image)
}

/// How long a call's images took to draw and to encode, seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ImageTiming {
    /// Drawing the cameras and reading their pixels back.
    pub render_s: f64,
    /// Encoding the frames.
    pub encode_s: f64,
}

impl ImageTiming {
    /// Images drawn from `started` to `drawn`, then encoded until now.
    pub fn since(started: Instant, drawn: Instant) -> Self {
        ImageTiming {
            render_s: drawn.saturating_duration_since(started).as_secs_f64(),
            encode_s: drawn.elapsed().as_secs_f64(),
        }
    }
}

/// Depth codes are millimetres; farther than this (or no hit) saturates.
pub const MAX_DEPTH_MM: u16 = u16::MAX;

/// Encodes the colour image as an 8-bit RGB PNG.
pub fn encode_rgb_png(frame: &Frame) -> Result<Vec<u8>, EncodeError> {
    encode(
        frame.width,
        frame.height,
        png::ColorType::Rgb,
        png::BitDepth::Eight,
        &frame.rgb,
    )
}

/// Encodes the depth image as a 16-bit greyscale PNG of millimetres, if the frame has depth.
pub fn encode_depth_png(frame: &Frame) -> Result<Option<Vec<u8>>, EncodeError> {
    let Some(depth) = &frame.depth else {
        return Ok(None);
    };
    let bytes: Vec<u8> = depth_to_mm(depth).iter().flat_map(|mm| mm.to_be_bytes()).collect();
    encode(
        frame.width,
        frame.height,
        png::ColorType::Grayscale,
        png::BitDepth::Sixteen,
        &bytes,
    )
    .map(Some)
}

/// Depth in metres to millimetre codes, rounded and saturated.
pub fn depth_to_mm(depth: &[f32]) -> Vec<u16> {
    depth
        .iter()
        .map(|&m| {
            let mm = (f64::from(m) * 1000.0).round();
            if mm.is_finite() && mm >= 0.0 {
                mm.min(f64::from(MAX_DEPTH_MM)) as u16
            } else {
                MAX_DEPTH_MM
            }
        })
        .collect()
}

fn encode(
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    bytes: &[u8],
) -> Result<Vec<u8>, EncodeError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(color);
    encoder.set_depth(depth);
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header().map_err(|e| EncodeError(e.to_string()))?;
    writer.write_image_data(bytes).map_err(|e| EncodeError(e.to_string()))?;
    writer.finish().map_err(|e| EncodeError(e.to_string()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_codes_round_and_saturate() {
        assert_eq!(
            depth_to_mm(&[0.0, 0.2504, 1.0, 100.0, f32::NAN, -1.0]),
            vec![0, 250, 1000, 65535, 65535, 65535]
        );
    }

    #[test]
    fn rgb_png_round_trips() {
        let frame = Frame {
            width: 2,
            height: 1,
            rgb: vec![1, 2, 3, 4, 5, 6],
            depth: None,
        };
        let png_bytes = encode_rgb_png(&frame).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.width, info.height), (2, 1));
        assert_eq!(&buf[..6], &[1, 2, 3, 4, 5, 6]);
    }
}
