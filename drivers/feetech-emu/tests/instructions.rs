//! Raw instruction frames in, expected status frames out, for every instruction.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{bus_with, exchange, frames, send, so101};
use feetech::control_table as ct;
use feetech::protocol::BROADCAST_ID;
use feetech::protocol::frame::{Frame, FrameDecoder};
use feetech::protocol::instruction;
use feetech_emu::{EmuConfig, ServoBus, ServoConfig};

const ACK_ID1: [u8; 6] = [0xFF, 0xFF, 0x01, 0x02, 0x00, 0xFC];

#[test]
fn ping_is_answered_with_an_empty_status() {
    let (bus, _) = bus_with(&[1]);
    assert_eq!(exchange(&bus, &[0xFF, 0xFF, 0x01, 0x02, 0x01, 0xFB]), ACK_ID1);
}

#[test]
fn read_present_position_matches_the_reference_example() {
    let (bus, _) = bus_with(&[1]);
    let reply = exchange(&bus, &[0xFF, 0xFF, 0x01, 0x04, 0x02, 0x38, 0x02, 0xBE]);
    assert_eq!(reply, [0xFF, 0xFF, 0x01, 0x04, 0x00, 0x00, 0x08, 0xF2]);
}

#[test]
fn read_model_number_and_firmware() {
    let (bus, _) = bus_with(&[7]);
    let reply = frames(&send(&bus, &instruction::read(7, 0, 5)));
    assert_eq!(reply, [Frame::new(7, 0, vec![3, 10, 0, 0x09, 0x03])]);
}

#[test]
fn read_past_the_table_end_gets_no_reply() {
    let (bus, _) = bus_with(&[1]);
    assert!(send(&bus, &instruction::read(1, 250, 10)).is_empty());
}

#[test]
fn write_is_acknowledged_and_applied() {
    let (bus, _) = bus_with(&[1]);
    assert_eq!(
        exchange(&bus, &[0xFF, 0xFF, 0x01, 0x04, 0x03, 0x28, 0x01, 0xCE]),
        ACK_ID1
    );
    assert_eq!(bus.register(1, &ct::TORQUE_ENABLE).unwrap(), 1);
}

#[test]
fn writes_to_read_only_registers_are_ignored() {
    let (bus, _) = bus_with(&[1]);
    let reply = send(&bus, &instruction::write(1, ct::MODEL_NUMBER.address, &[0x00, 0x00]));
    assert_eq!(reply, ACK_ID1);
    assert_eq!(bus.register(1, &ct::MODEL_NUMBER).unwrap(), 777);
}

#[test]
fn reg_write_waits_for_action() {
    let (bus, _) = bus_with(&[1]);
    send(&bus, &instruction::write(1, ct::GOAL_POSITION.address, &[0x00, 0x04]));
    let ack = exchange(&bus, &[0xFF, 0xFF, 0x01, 0x05, 0x04, 0x2A, 0x00, 0x08, 0xC3]);
    assert_eq!(ack, ACK_ID1);
    assert_eq!(bus.register(1, &ct::GOAL_POSITION).unwrap(), 1024);
    assert_eq!(bus.register(1, &ct::ASYNC_WRITE_FLAG).unwrap(), 1);

    assert!(exchange(&bus, &[0xFF, 0xFF, 0xFE, 0x02, 0x05, 0xFA]).is_empty());
    assert_eq!(bus.register(1, &ct::GOAL_POSITION).unwrap(), 2048);
    assert_eq!(bus.register(1, &ct::ASYNC_WRITE_FLAG).unwrap(), 0);
}

#[test]
fn unicast_action_is_acknowledged() {
    let (bus, _) = bus_with(&[1, 2]);
    send(&bus, &instruction::reg_write(2, ct::ACCELERATION.address, &[77]));
    let reply = frames(&send(&bus, &instruction::action(2)));
    assert_eq!(reply, [Frame::new(2, 0, vec![])]);
    assert_eq!(bus.register(2, &ct::ACCELERATION).unwrap(), 77);
}

#[test]
fn sync_read_of_six_servos_replies_in_id_order() {
    let (bus, _) = so101();
    let request = [
        0xFF, 0xFF, 0xFE, 0x0A, 0x82, 0x38, 0x02, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x26,
    ];
    let reply = exchange(&bus, &request);
    assert_eq!(reply.len(), 48);
    let frames = frames(&reply);
    let ids: Vec<u8> = frames.iter().map(|f| f.id).collect();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    for frame in &frames {
        assert_eq!(frame.body, 0);
        assert_eq!(frame.params, [0xFF, 0x07], "every joint rests at 2047");
    }
}

#[test]
fn sync_read_follows_the_order_of_the_id_list_and_skips_absent_servos() {
    let (bus, _) = so101();
    let reply = frames(&send(&bus, &instruction::sync_read(ct::ID.address, 1, &[3, 9, 1, 2])));
    let ids: Vec<(u8, Vec<u8>)> = reply.into_iter().map(|f| (f.id, f.params)).collect();
    assert_eq!(ids, [(3, vec![3]), (1, vec![1]), (2, vec![2])]);
}

#[test]
fn sync_read_of_the_state_block() {
    let (bus, _) = so101();
    let request = instruction::sync_read(ct::STATE_BLOCK_ADDRESS, ct::STATE_BLOCK_LEN, &[4]);
    let reply = frames(&send(&bus, &request));
    let [frame] = reply.as_slice() else {
        panic!("one reply expected, got {reply:?}");
    };
    let state = ct::ServoState::from_block(&frame.params).unwrap();
    assert_eq!(state.position, 2047);
    assert_eq!(state.voltage, 120);
    assert_eq!(state.temperature, 25);
    assert!(!state.moving);
}

#[test]
fn sync_write_sets_every_goal_without_reply() {
    let (bus, _) = so101();
    let request = [
        0xFF, 0xFF, 0xFE, 0x16, 0x83, 0x2A, 0x02, 0x01, 0x00, 0x08, 0x02, 0x00, 0x08, 0x03, 0x00, 0x08, 0x04, 0x00,
        0x08, 0x05, 0x00, 0x08, 0x06, 0x00, 0x08, 0xF7,
    ];
    assert!(exchange(&bus, &request).is_empty());
    for id in 1..=6 {
        assert_eq!(bus.register(id, &ct::GOAL_POSITION).unwrap(), 2048);
    }
}

#[test]
fn factory_reset_restores_id_baud_and_calibration() {
    let (bus, _) = so101();
    let reply = frames(&send(&bus, &instruction::factory_reset(3)));
    assert_eq!(reply, [Frame::new(3, 0, vec![])], "the reset is acknowledged by id 3");
    assert_eq!(bus.ids(), [1, 2, 1, 4, 5, 6], "servo 3 is back to the factory id");
}

#[test]
fn factory_reset_erases_a_lone_servos_settings() {
    let config = ServoConfig {
        homing_offset: -300,
        position_limits: (100, 200),
        ..ServoConfig::new(9)
    };
    let (bus, _) = ServoBus::simulated(&EmuConfig::new(vec![config]));
    send(&bus, &instruction::write(9, ct::BAUD_RATE.address, &[4]));
    bus.set_baud(115_200);
    send(&bus, &instruction::factory_reset(9));
    bus.set_baud(1_000_000);
    assert_eq!(bus.ids(), [1]);
    assert_eq!(bus.register(1, &ct::HOMING_OFFSET).unwrap(), 0);
    assert_eq!(bus.register(1, &ct::MIN_POSITION_LIMIT).unwrap(), 0);
    assert_eq!(bus.register(1, &ct::MAX_POSITION_LIMIT).unwrap(), 4095);
    assert_eq!(send(&bus, &instruction::ping(1)), ACK_ID1);
}

#[test]
fn broadcast_write_applies_everywhere_without_reply() {
    let (bus, _) = so101();
    assert!(
        send(
            &bus,
            &instruction::write(BROADCAST_ID, ct::ACCELERATION.address, &[200])
        )
        .is_empty()
    );
    for id in 1..=6 {
        assert_eq!(bus.register(id, &ct::ACCELERATION).unwrap(), 200);
    }
    assert!(send(&bus, &instruction::read(BROADCAST_ID, ct::ID.address, 1)).is_empty());
    assert!(send(&bus, &instruction::factory_reset(BROADCAST_ID)).is_empty());
}

#[test]
fn broadcast_ping_is_answered_by_every_servo_in_id_order() {
    let (bus, _) = bus_with(&[5, 2, 9]);
    let ids: Vec<u8> = frames(&send(&bus, &instruction::ping(BROADCAST_ID)))
        .iter()
        .map(|f| f.id)
        .collect();
    assert_eq!(ids, [2, 5, 9]);
}

#[test]
fn response_level_zero_answers_only_reads_and_pings() {
    let (bus, _) = bus_with(&[1]);
    send(&bus, &instruction::write(1, ct::RESPONSE_STATUS_LEVEL.address, &[0]));
    assert!(send(&bus, &instruction::write(1, ct::ACCELERATION.address, &[9])).is_empty());
    assert!(send(&bus, &instruction::reg_write(1, ct::ACCELERATION.address, &[8])).is_empty());
    assert!(send(&bus, &instruction::action(1)).is_empty());
    assert_eq!(bus.register(1, &ct::ACCELERATION).unwrap(), 8);
    assert_eq!(send(&bus, &instruction::ping(1)), ACK_ID1);
    assert_eq!(
        frames(&send(&bus, &instruction::read(1, ct::ACCELERATION.address, 1)))[0].params,
        [8]
    );
}

#[test]
fn unknown_instructions_and_malformed_parameters_are_ignored() {
    let (bus, _) = bus_with(&[1]);
    assert!(send(&bus, &Frame::new(1, 0x0A, vec![])).is_empty());
    assert!(send(&bus, &Frame::new(1, 0x02, vec![0x38])).is_empty());
    assert!(send(&bus, &Frame::new(BROADCAST_ID, 0x83, vec![0x2A, 0x02, 0x01, 0x00])).is_empty());
    assert!(send(&bus, &Frame::new(1, 0x82, vec![0x38, 0x02, 0x01])).is_empty());
}

#[test]
fn id_changes_take_effect_immediately_and_the_write_is_acknowledged_by_the_old_id() {
    let (bus, _) = bus_with(&[1]);
    send(&bus, &instruction::write(1, ct::LOCK.address, &[0]));
    assert_eq!(send(&bus, &instruction::write(1, ct::ID.address, &[6])), ACK_ID1);
    assert!(send(&bus, &instruction::ping(1)).is_empty());
    assert_eq!(frames(&send(&bus, &instruction::ping(6))), [Frame::new(6, 0, vec![])]);
}

#[test]
fn servos_at_another_baud_rate_do_not_hear_the_host() {
    let (bus, _) = bus_with(&[1]);
    send(&bus, &instruction::write(1, ct::BAUD_RATE.address, &[4]));
    assert!(send(&bus, &instruction::ping(1)).is_empty());
    bus.set_baud(115_200);
    assert_eq!(send(&bus, &instruction::ping(1)), ACK_ID1);
}

#[test]
fn servos_sharing_an_id_garble_each_others_replies() {
    let (bus, _) = bus_with(&[1, 1]);
    let reply = send(&bus, &instruction::ping(1));
    assert!(!reply.is_empty(), "both servos drive the line");
    let mut decoder = FrameDecoder::new();
    decoder.push(&reply);
    let intact = std::iter::from_fn(|| decoder.next_frame())
        .filter(|f| f.is_ok())
        .count();
    assert_eq!(intact, 0, "no valid status packet survives the collision: {reply:02X?}");
}

#[test]
fn a_servo_listed_twice_in_a_sync_read_answers_twice() {
    let (bus, _) = bus_with(&[1]);
    let reply = frames(&send(&bus, &instruction::sync_read(ct::ID.address, 1, &[1, 1])));
    assert_eq!(reply, [Frame::new(1, 0, vec![1]), Frame::new(1, 0, vec![1])]);
}
