#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Golden bytes for every instruction builder (worked examples from the protocol reference).

use feetech::control_table::{GOAL_POSITION, PRESENT_POSITION, TORQUE_ENABLE};
use feetech::protocol::BROADCAST_ID;
use feetech::protocol::frame::{Frame, FrameDecoder};
use feetech::protocol::instruction::{self, InstructionPacket, Request};
use feetech::protocol::status::{ServoError, StatusPacket};

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

#[test]
fn ping_golden() {
    assert_eq!(instruction::ping(1).encode(), hex("FF FF 01 02 01 FB"));
}

#[test]
fn read_golden() {
    let frame = instruction::read(1, PRESENT_POSITION.address, PRESENT_POSITION.size);
    assert_eq!(frame.encode(), hex("FF FF 01 04 02 38 02 BE"));
    assert_eq!(instruction::read(1, 0x2B, 1).encode(), hex("FF FF 01 04 02 2B 01 CC"));
}

#[test]
fn read_reply_golden() {
    let mut decoder = FrameDecoder::new();
    decoder.push(&hex("FF FF 01 04 00 00 08 F2"));
    let status = StatusPacket::from(decoder.next_frame().unwrap().unwrap());
    assert_eq!(status.id, 1);
    assert_eq!(status.error, ServoError::empty());
    assert_eq!(PRESENT_POSITION.decode(&status.params), 2048);
    assert_eq!(status.to_frame().encode(), hex("FF FF 01 04 00 00 08 F2"));
}

#[test]
fn write_golden() {
    let frame = instruction::write(1, TORQUE_ENABLE.address, &TORQUE_ENABLE.encode(1));
    assert_eq!(frame.encode(), hex("FF FF 01 04 03 28 01 CE"));
}

#[test]
fn sync_read_golden() {
    let frame = instruction::sync_read(PRESENT_POSITION.address, 2, &[1, 2, 3, 4, 5, 6]);
    assert_eq!(frame.encode(), hex("FF FF FE 0A 82 38 02 01 02 03 04 05 06 26"));
    assert_eq!(
        instruction::sync_read(30, 2, &[11, 12]).encode(),
        hex("FF FF FE 06 82 1E 02 0B 0C 42")
    );
}

#[test]
fn sync_write_golden() {
    let entries: Vec<(u8, Vec<u8>)> = (1..=6).map(|id| (id, GOAL_POSITION.encode(2048))).collect();
    let frame = instruction::sync_write(GOAL_POSITION.address, 2, &entries);
    assert_eq!(
        frame.encode(),
        hex("FF FF FE 16 83 2A 02 01 00 08 02 00 08 03 00 08 04 00 08 05 00 08 06 00 08 F7")
    );
    assert_eq!(
        instruction::sync_write(30, 2, &[(11, [0, 0]), (12, [0x0A, 0x14])]).encode(),
        hex("FF FF FE 0A 83 1E 02 0B 00 00 0C 0A 14 1F")
    );
}

#[test]
fn reg_write_and_action_golden() {
    let frame = instruction::reg_write(1, GOAL_POSITION.address, &GOAL_POSITION.encode(2048));
    assert_eq!(frame.encode(), hex("FF FF 01 05 04 2A 00 08 C3"));
    assert_eq!(instruction::action(BROADCAST_ID).encode(), hex("FF FF FE 02 05 FA"));
}

#[test]
fn factory_reset_golden() {
    // !(0x01 + 0x02 + 0x06) = !0x09 = 0xF6
    assert_eq!(instruction::factory_reset(1).encode(), hex("FF FF 01 02 06 F6"));
}

#[test]
fn status_with_error_flags_encodes_error_byte() {
    let status = StatusPacket::new(3, ServoError::OVERLOAD | ServoError::VOLTAGE, vec![]);
    // !(0x03 + 0x02 + 0x21) = !0x26 = 0xD9
    assert_eq!(status.to_frame().encode(), hex("FF FF 03 02 21 D9"));
    assert_eq!(status.error.to_string(), "VOLTAGE|OVERLOAD");
}

#[test]
fn parse_recovers_every_builder() {
    let cases: Vec<(Frame, Request)> = vec![
        (instruction::ping(7), Request::Ping),
        (instruction::read(7, 56, 15), Request::Read { addr: 56, len: 15 }),
        (
            instruction::write(7, 42, &[1, 2]),
            Request::Write {
                addr: 42,
                data: vec![1, 2],
            },
        ),
        (
            instruction::reg_write(7, 42, &[3]),
            Request::RegWrite {
                addr: 42,
                data: vec![3],
            },
        ),
        (instruction::action(7), Request::Action),
        (instruction::factory_reset(7), Request::Reset),
        (
            instruction::sync_read(56, 2, &[1, 2]),
            Request::SyncRead {
                addr: 56,
                len: 2,
                ids: vec![1, 2],
            },
        ),
        (
            instruction::sync_write(42, 2, &[(1, [0, 8]), (2, [1, 0])]),
            Request::SyncWrite {
                addr: 42,
                len: 2,
                entries: vec![(1, vec![0, 8]), (2, vec![1, 0])],
            },
        ),
    ];
    for (frame, expected) in cases {
        assert_eq!(Request::parse(&frame).unwrap(), expected, "{frame:?}");
        let packet = InstructionPacket::from_frame(&frame).unwrap();
        assert_eq!(packet.to_frame(), frame);
    }
}

#[test]
fn parse_rejects_malformed_params() {
    let bad = [
        Frame::new(1, 0x01, vec![0]),
        Frame::new(1, 0x02, vec![56]),
        Frame::new(1, 0x03, vec![42]),
        Frame::new(BROADCAST_ID, 0x83, vec![42, 2, 1, 0]),
        Frame::new(BROADCAST_ID, 0x83, vec![42, 0]),
        Frame::new(1, 0x99, vec![]),
    ];
    for frame in bad {
        assert!(Request::parse(&frame).is_err(), "{frame:?}");
    }
}

#[test]
fn broadcasts_expect_no_reply_except_ping_and_sync_read() {
    let expects = |frame: Frame| InstructionPacket::from_frame(&frame).unwrap().expects_reply();
    assert!(expects(instruction::ping(BROADCAST_ID)));
    assert!(expects(instruction::sync_read(56, 2, &[1])));
    assert!(!expects(instruction::action(BROADCAST_ID)));
    assert!(!expects(instruction::write(BROADCAST_ID, 40, &[0])));
    assert!(!expects(instruction::sync_write(42, 2, &[(1, [0, 0])])));
    assert!(expects(instruction::write(1, 40, &[0])));
}
