#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Streaming decoder: resynchronisation, partial frames, bad checksums, arbitrary input.

use feetech::protocol::frame::{DecodeError, Frame, FrameDecoder};
use feetech::protocol::instruction;
use feetech::protocol::status::{ServoError, StatusPacket};
use feetech::protocol::sync_read::{SyncReadError, parse_sync_read_reply};
use proptest::prelude::*;

fn drain(decoder: &mut FrameDecoder) -> Vec<Result<Frame, DecodeError>> {
    std::iter::from_fn(|| decoder.next_frame()).collect()
}

fn frames_only(results: Vec<Result<Frame, DecodeError>>) -> Vec<Frame> {
    results.into_iter().filter_map(Result::ok).collect()
}

fn status(id: u8, params: &[u8]) -> Frame {
    StatusPacket::new(id, ServoError::empty(), params.to_vec()).to_frame()
}

#[test]
fn garbage_before_a_frame_is_skipped() {
    let mut decoder = FrameDecoder::new();
    decoder.push(&[0x00, 0x13, 0xFF, 0x42, 0xFF]);
    decoder.push(&instruction::ping(3).encode());
    assert_eq!(frames_only(drain(&mut decoder)), vec![instruction::ping(3)]);
    assert_eq!(decoder.discarded(), 5);
}

#[test]
fn extra_header_byte_is_tolerated() {
    let mut decoder = FrameDecoder::new();
    let mut bytes = vec![0xFF];
    bytes.extend(instruction::ping(3).encode());
    decoder.push(&bytes);
    assert_eq!(frames_only(drain(&mut decoder)), vec![instruction::ping(3)]);
}

#[test]
fn partial_frame_completes_across_pushes() {
    let bytes = status(2, &[0x00, 0x08]).encode();
    let mut decoder = FrameDecoder::new();
    for (i, byte) in bytes.iter().enumerate() {
        decoder.push(&[*byte]);
        let got = decoder.next_frame();
        if i + 1 < bytes.len() {
            assert!(got.is_none(), "frame finished early at byte {i}");
        } else {
            assert_eq!(got.unwrap().unwrap(), status(2, &[0x00, 0x08]));
        }
    }
}

#[test]
fn bad_checksum_is_reported_once_and_skipped() {
    let mut bad = status(4, &[1, 2]).encode();
    let last = bad.len() - 1;
    bad[last] ^= 0x55;
    let mut decoder = FrameDecoder::new();
    decoder.push(&bad);
    decoder.push(&status(5, &[3, 4]).encode());
    let results = drain(&mut decoder);
    assert_eq!(results.len(), 2);
    assert!(matches!(results[0], Err(DecodeError::Checksum { id: 4, .. })));
    assert_eq!(results[1], Ok(status(5, &[3, 4])));
}

#[test]
fn corrupted_length_does_not_stall_following_frames() {
    // A header announcing 200 bytes, then two real frames: both must come out at once.
    let mut decoder = FrameDecoder::new();
    decoder.push(&[0xFF, 0xFF, 0x01, 200, 0x00, 0x01]);
    decoder.push(&status(1, &[0, 8]).encode());
    decoder.push(&status(2, &[0, 8]).encode());
    assert_eq!(
        frames_only(drain(&mut decoder)),
        vec![status(1, &[0, 8]), status(2, &[0, 8])]
    );
}

#[test]
fn truncated_frame_followed_by_nothing_waits() {
    let bytes = status(1, &[0, 8]).encode();
    let mut decoder = FrameDecoder::new();
    decoder.push(&bytes[..5]);
    assert!(decoder.next_frame().is_none());
    assert_eq!(decoder.pending(), &bytes[..5]);
}

#[test]
fn sync_read_reply_in_any_order_with_missing_servo() {
    let mut bytes = status(3, &[0x30, 0x00]).encode();
    bytes.extend(status(1, &[0x10, 0x00]).encode());
    bytes.extend([0x00, 0xFF]); // line noise
    let results = parse_sync_read_reply(&bytes, 2, &[1, 2, 3]);
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].0, 1);
    assert_eq!(results[0].1.as_ref().unwrap().params, vec![0x10, 0x00]);
    assert_eq!(results[1], (2, Err(SyncReadError::NoReply)));
    assert_eq!(results[2].1.as_ref().unwrap().params, vec![0x30, 0x00]);
}

#[test]
fn sync_read_reply_reports_checksum_and_length_per_servo() {
    let mut corrupt = status(1, &[0x10, 0x00]).encode();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 1;
    let mut bytes = corrupt;
    bytes.extend(status(2, &[0x10]).encode());
    bytes.extend(
        StatusPacket::new(3, ServoError::OVERHEAT, vec![1, 0])
            .to_frame()
            .encode(),
    );
    bytes.extend(status(9, &[0, 0]).encode()); // not asked
    let results = parse_sync_read_reply(&bytes, 2, &[1, 2, 3]);
    assert_eq!(results[0], (1, Err(SyncReadError::Checksum)));
    assert_eq!(results[1], (2, Err(SyncReadError::BadLength { expected: 2, got: 1 })));
    let third = results[2].1.as_ref().unwrap();
    assert_eq!(third.error, ServoError::OVERHEAT);
}

#[test]
fn later_valid_reply_replaces_a_corrupt_one() {
    let mut corrupt = status(1, &[5, 0]).encode();
    let last = corrupt.len() - 1;
    corrupt[last] ^= 1;
    let mut bytes = corrupt;
    bytes.extend(status(1, &[6, 0]).encode());
    let results = parse_sync_read_reply(&bytes, 2, &[1]);
    assert_eq!(results[0].1.as_ref().unwrap().params, vec![6, 0]);
}

/// Frames whose bytes after the header hold no `FF FF` pair: a header inside a frame that has
/// not fully arrived is ambiguous on this protocol (a real decoder cannot tell it from a
/// shorter frame), so these tests keep that case out and test it separately above.
fn arb_frame(max_params: usize) -> impl Strategy<Value = Frame> {
    (
        0_u8..=0xFE,
        any::<u8>(),
        prop::collection::vec(any::<u8>(), 0..max_params),
    )
        .prop_map(|(id, body, params)| Frame::new(id, body, params))
        .prop_filter("no header inside the frame", |frame| {
            let bytes = frame.encode();
            !bytes[2..bytes.len() - 1].windows(2).any(|w| w == [0xFF, 0xFF])
        })
}

proptest! {
    #[test]
    fn random_bytes_never_panic(chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 0..16)) {
        let mut decoder = FrameDecoder::new();
        for chunk in &chunks {
            decoder.push(chunk);
            while let Some(result) = decoder.next_frame() {
                if let Ok(frame) = result {
                    prop_assert!(frame.params.len() <= 253);
                }
            }
            // Whatever stays buffered is at most one unfinished frame.
            prop_assert!(decoder.pending().len() < 259);
        }
    }

    #[test]
    fn frame_round_trips_through_any_chunking(frames in prop::collection::vec(arb_frame(40), 1..6), split in any::<prop::sample::Index>()) {
        let bytes: Vec<u8> = frames.iter().flat_map(Frame::encode).collect();
        let cut = split.index(bytes.len() + 1);
        let mut decoder = FrameDecoder::new();
        decoder.push(&bytes[..cut]);
        let mut got = frames_only(drain(&mut decoder));
        decoder.push(&bytes[cut..]);
        got.extend(frames_only(drain(&mut decoder)));
        prop_assert_eq!(got, frames);
    }

    #[test]
    fn resyncs_after_garbage_and_a_truncated_frame(
        garbage in prop::collection::vec(0_u8..0xFF, 0..50),
        long_frame in (arb_frame(80), 40_usize..80).prop_map(|(mut f, n)| { f.params.resize(n, 0); f }),
        cut in 0_usize..6,
        frame in arb_frame(30),
    ) {
        // Garbage, then the first bytes of a frame longer than anything that follows it,
        // then a complete frame (shorter than the announced one, so the truncated frame can
        // never look complete): the complete frame must come out.
        let mut bytes = garbage;
        bytes.extend_from_slice(&long_frame.encode()[..cut]);
        bytes.extend(frame.encode());
        let mut decoder = FrameDecoder::new();
        decoder.push(&bytes);
        let got = frames_only(drain(&mut decoder));
        prop_assert_eq!(got, vec![frame]);
    }
}
