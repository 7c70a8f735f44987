#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The async bus against a scripted responder over `tokio::io::duplex` (virtual time, so
//! timeouts cost nothing and nothing depends on wall-clock speed).

mod common;

use common::{FakeServo, Script, fake_bus, serve};
use feetech::bus::{Bus, BusError, EepromWrite, ScanMethod, ScanOptions};
use feetech::control_table::{
    GOAL_POSITION, HOMING_OFFSET, LOCK, MAX_POSITION_LIMIT, MIN_POSITION_LIMIT, PRESENT_POSITION, STATE_BLOCK_ADDRESS,
    TORQUE_ENABLE,
};
use feetech::protocol::instruction::Request;
use feetech::protocol::status::{ServoError, StatusPacket};
use std::sync::{Arc, Mutex};
use tokio::io::AsyncWriteExt;

fn requests_to(script: &common::Shared, id: u8) -> Vec<Request> {
    script
        .lock()
        .unwrap()
        .log
        .iter()
        .filter(|(to, _)| *to == id)
        .map(|(_, r)| r.clone())
        .collect()
}

fn writes_to(script: &common::Shared, id: u8) -> Vec<(u8, Vec<u8>)> {
    requests_to(script, id)
        .into_iter()
        .filter_map(|r| match r {
            Request::Write { addr, data } => Some((addr, data)),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn ping_surfaces_error_flags() {
    let (mut bus, script) = fake_bus(&[1, 2]);
    script
        .lock()
        .unwrap()
        .flags
        .insert(2, ServoError::OVERLOAD | ServoError::OVERHEAT);
    let ok = bus.ping(1).await.unwrap();
    assert_eq!(ok.error, ServoError::empty());
    let flagged = bus.ping(2).await.unwrap();
    assert_eq!(flagged.error, ServoError::OVERLOAD | ServoError::OVERHEAT);
    match flagged.checked() {
        Err(BusError::Servo { id: 2, error }) => assert!(error.contains(ServoError::OVERLOAD)),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn every_error_flag_is_typed() {
    let (mut bus, script) = fake_bus(&[1]);
    for flag in [
        ServoError::VOLTAGE,
        ServoError::ANGLE_SENSOR,
        ServoError::OVERHEAT,
        ServoError::OVERCURRENT,
        ServoError::OVERLOAD,
    ] {
        script.lock().unwrap().flags.insert(1, flag);
        let reply = bus.read_register(1, &PRESENT_POSITION).await.unwrap();
        assert_eq!(reply.value, 2048, "data still delivered with {flag}");
        assert!(matches!(reply.checked(), Err(BusError::Servo { id: 1, error }) if error == flag));
    }
}

#[tokio::test(start_paused = true)]
async fn read_and_write_registers() {
    let (mut bus, script) = fake_bus(&[3]);
    bus.write_register(3, &GOAL_POSITION, -5)
        .await
        .unwrap()
        .checked()
        .unwrap();
    assert_eq!(script.lock().unwrap().servos[&3].memory[42..44], [0x05, 0x80]);
    assert_eq!(bus.read_register(3, &GOAL_POSITION).await.unwrap().value, -5);
    assert!(matches!(
        bus.write_register(3, &PRESENT_POSITION, 1).await,
        Err(BusError::ReadOnly {
            register: "Present_Position"
        })
    ));
    assert!(matches!(
        bus.write_register(3, &HOMING_OFFSET, 3000).await,
        Err(BusError::Value(_))
    ));
    assert!(matches!(bus.read(0xFE, 56, 2).await, Err(BusError::InvalidId(0xFE))));
}

#[tokio::test(start_paused = true)]
async fn lost_reply_is_retried() {
    let (mut bus, script) = fake_bus(&[1]);
    script.lock().unwrap().drop_replies = 2;
    assert_eq!(bus.read_register(1, &PRESENT_POSITION).await.unwrap().value, 2048);
    assert_eq!(requests_to(&script, 1).len(), 3);
}

#[tokio::test(start_paused = true)]
async fn retries_are_bounded_and_end_in_no_reply() {
    let (mut bus, script) = fake_bus(&[1]);
    script.lock().unwrap().drop_replies = 3;
    assert!(matches!(bus.ping(1).await, Err(BusError::NoReply { id: 1 })));
    assert_eq!(requests_to(&script, 1).len(), 3, "1 attempt + 2 retries");
}

#[tokio::test(start_paused = true)]
async fn corrupted_replies_are_retried_then_reported() {
    let (mut bus, script) = fake_bus(&[1]);
    script.lock().unwrap().corrupt_replies = 1;
    assert!(bus.ping(1).await.is_ok());
    script.lock().unwrap().corrupt_replies = 3;
    assert!(matches!(bus.ping(1).await, Err(BusError::Checksum { id: 1 })));
    let mut config = *bus.config();
    config.retries = 0;
    bus.set_config(config);
    script.lock().unwrap().corrupt_replies = 1;
    assert!(matches!(bus.ping(1).await, Err(BusError::Checksum { id: 1 })));
}

#[tokio::test(start_paused = true)]
async fn line_noise_before_replies_is_skipped() {
    let (mut bus, script) = fake_bus(&[1, 2]);
    script.lock().unwrap().noise = vec![0x00, 0xFF, 0x13, 0xFF];
    assert_eq!(bus.read_register(1, &PRESENT_POSITION).await.unwrap().value, 2048);
    let positions = bus.sync_read_positions(&[1, 2]).await.unwrap();
    assert!(positions.iter().all(|r| r.as_ref().unwrap().value == 2048));
}

#[tokio::test(start_paused = true)]
async fn stale_input_is_flushed_before_a_transaction() {
    let script = Arc::new(Mutex::new(Script {
        servos: [(1, FakeServo::new(1))].into_iter().collect(),
        host_baud: 1_000_000,
        ..Script::default()
    }));
    let (host, mut device) = tokio::io::duplex(4096);
    // A late reply with a different position is already waiting when the read starts.
    let stale = StatusPacket::new(1, ServoError::empty(), PRESENT_POSITION.encode(999));
    device.write_all(&stale.to_frame().encode()).await.unwrap();
    tokio::spawn(serve(device, script));
    let mut bus = Bus::new(host, common::config());
    assert_eq!(bus.read_register(1, &PRESENT_POSITION).await.unwrap().value, 2048);
}

#[tokio::test(start_paused = true)]
async fn a_late_reply_of_another_length_is_passed_over_without_sending_again() {
    let (mut bus, script) = fake_bus(&[1]);
    // The answer to an earlier read arrives after the drain, just before the write's own ack.
    let late = StatusPacket::new(1, ServoError::empty(), vec![0; 16]);
    script.lock().unwrap().stale_before_next_request = late.to_frame().encode();
    bus.write_register(1, &TORQUE_ENABLE, 1)
        .await
        .unwrap()
        .checked()
        .unwrap();
    assert_eq!(
        writes_to(&script, 1),
        vec![(TORQUE_ENABLE.address, vec![1])],
        "written once"
    );
}

#[tokio::test(start_paused = true)]
async fn port_gone_is_reported() {
    let (host, device) = tokio::io::duplex(64);
    drop(device);
    let mut bus = Bus::new(host, common::config());
    assert!(matches!(bus.ping(1).await, Err(BusError::PortGone(_))));
}

#[tokio::test(start_paused = true)]
async fn sync_read_any_order_with_partial_results_and_targeted_retries() {
    let (mut bus, script) = fake_bus(&[1, 2, 3, 4]);
    {
        let mut s = script.lock().unwrap();
        s.reverse_sync_read = true;
        s.silent.insert(3);
        s.servos.get_mut(&2).unwrap().set(&PRESENT_POSITION, 100);
        s.flags.insert(4, ServoError::VOLTAGE);
    }
    let results = bus.sync_read_positions(&[1, 2, 3, 4]).await.unwrap();
    assert_eq!(results[0].as_ref().unwrap().value, 2048);
    assert_eq!(results[1].as_ref().unwrap().value, 100);
    assert!(matches!(results[2], Err(BusError::NoReply { id: 3 })));
    assert_eq!(results[3].as_ref().unwrap().error, ServoError::VOLTAGE);
    let sync_reads: Vec<Vec<u8>> = script
        .lock()
        .unwrap()
        .log
        .iter()
        .filter_map(|(_, r)| match r {
            Request::SyncRead { ids, .. } => Some(ids.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(sync_reads, vec![vec![1, 2, 3, 4], vec![3], vec![3]]);
}

#[tokio::test(start_paused = true)]
async fn sync_read_recovers_a_corrupted_servo_reply() {
    let (mut bus, script) = fake_bus(&[1, 2]);
    script.lock().unwrap().corrupt_replies = 1;
    let results = bus.sync_read_positions(&[1, 2]).await.unwrap();
    assert!(results.iter().all(Result::is_ok));
    let mut config = *bus.config();
    config.retries = 0;
    bus.set_config(config);
    script.lock().unwrap().corrupt_replies = 1;
    let results = bus.sync_read_positions(&[1, 2]).await.unwrap();
    assert!(matches!(results[0], Err(BusError::Checksum { id: 1 })));
    assert!(results[1].is_ok());
}

#[tokio::test(start_paused = true)]
async fn sync_read_state_decodes_the_block() {
    let (mut bus, script) = fake_bus(&[5, 6]);
    {
        let mut s = script.lock().unwrap();
        let servo = s.servos.get_mut(&6).unwrap();
        servo.memory[60..62].copy_from_slice(&[0x20, 0x04]);
        servo.memory[69..71].copy_from_slice(&[0x10, 0x00]);
    }
    let states = bus.sync_read_state(&[5, 6]).await.unwrap();
    let six = states[1].as_ref().unwrap();
    assert_eq!(
        (six.id, six.value.position, six.value.load, six.value.current),
        (6, 2048, -32, 16)
    );
    assert_eq!(six.value.voltage, 120);
    let log = script.lock().unwrap().log.clone();
    assert!(
        matches!(log.last(), Some((0xFE, Request::SyncRead { addr, len: 15, .. })) if *addr == STATE_BLOCK_ADDRESS)
    );
}

#[tokio::test(start_paused = true)]
async fn sync_write_goals_and_buffered_writes() {
    let (mut bus, script) = fake_bus(&[1, 2]);
    bus.sync_write_goal_positions(&[(1, 1000), (2, -20)]).await.unwrap();
    assert_eq!(bus.read_register(2, &GOAL_POSITION).await.unwrap().value, -20);
    assert_eq!(script.lock().unwrap().servos[&1].get(&GOAL_POSITION), 1000);

    bus.reg_write_register(1, &GOAL_POSITION, 3000).await.unwrap();
    assert_eq!(bus.read_register(1, &GOAL_POSITION).await.unwrap().value, 1000);
    bus.action().await.unwrap();
    assert_eq!(bus.read_register(1, &GOAL_POSITION).await.unwrap().value, 3000);
    let too_many: Vec<(u8, [u8; 2])> = (0..100).map(|id| (id, [0, 0])).collect();
    assert!(matches!(
        bus.sync_write(42, 2, &too_many).await,
        Err(BusError::PacketTooLong { params: 302 })
    ));
    assert!(matches!(
        bus.sync_write(42, 2, &[(1, vec![0_u8])]).await,
        Err(BusError::BadLength {
            id: 1,
            expected: 2,
            got: 1
        })
    ));
}

#[tokio::test(start_paused = true)]
async fn torque_toggles_lock_like_lerobot() {
    let (mut bus, script) = fake_bus(&[1]);
    bus.torque_off(1).await.unwrap();
    bus.torque_on(1).await.unwrap();
    assert_eq!(
        writes_to(&script, 1),
        vec![(40, vec![0]), (55, vec![0]), (40, vec![1]), (55, vec![1])]
    );
}

#[tokio::test(start_paused = true)]
async fn eeprom_written_only_when_different_with_lock_handled() {
    let (mut bus, script) = fake_bus(&[1]);
    script
        .lock()
        .unwrap()
        .servos
        .get_mut(&1)
        .unwrap()
        .set(&TORQUE_ENABLE, 1);
    assert_eq!(
        bus.write_eeprom(1, &MAX_POSITION_LIMIT, 4095).await.unwrap(),
        EepromWrite::Unchanged
    );
    assert!(writes_to(&script, 1).is_empty());

    assert_eq!(
        bus.write_eeprom(1, &HOMING_OFFSET, -100).await.unwrap(),
        EepromWrite::Written
    );
    assert_eq!(
        writes_to(&script, 1),
        vec![
            (TORQUE_ENABLE.address, vec![0]),
            (LOCK.address, vec![0]),
            (HOMING_OFFSET.address, vec![0x64, 0x08]),
            (LOCK.address, vec![1]),
            // The goal follows the present position before torque returns (2048 here).
            (GOAL_POSITION.address, vec![0x00, 0x08]),
            (TORQUE_ENABLE.address, vec![1]),
        ]
    );
    let s = script.lock().unwrap();
    assert_eq!(s.servos[&1].get(&HOMING_OFFSET), -100);
    assert_eq!(s.servos[&1].get(&LOCK), 1);
    assert_eq!(s.servos[&1].get(&MIN_POSITION_LIMIT), 0);
}

#[tokio::test(start_paused = true)]
async fn echoing_adapter_is_handled_even_when_reply_equals_echo() {
    let (mut bus, script) = fake_bus(&[1, 2]);
    {
        let mut s = script.lock().unwrap();
        s.echo = true;
        // A PING reply from id 1 with the voltage flag is byte-identical to the PING itself.
        s.flags.insert(1, ServoError::VOLTAGE);
    }
    let mut config = *bus.config();
    config.echo = true;
    bus.set_config(config);
    assert_eq!(bus.ping(1).await.unwrap().error, ServoError::VOLTAGE);
    let positions = bus.sync_read_positions(&[1, 2]).await.unwrap();
    assert!(positions.iter().all(Result::is_ok));
    bus.sync_write_goal_positions(&[(2, 7)]).await.unwrap();
    assert_eq!(bus.read_register(2, &GOAL_POSITION).await.unwrap().value, 7);
}

#[tokio::test(start_paused = true)]
async fn missing_echo_is_an_echo_mismatch() {
    let (mut bus, _script) = fake_bus(&[1]);
    let mut config = *bus.config();
    config.echo = true;
    bus.set_config(config);
    assert!(matches!(bus.ping(1).await, Err(BusError::EchoMismatch)));
}

#[tokio::test(start_paused = true)]
async fn scan_broadcast_and_per_id_over_baud_rates() {
    let (mut bus, script) = fake_bus(&[1, 7]);
    script.lock().unwrap().servos.get_mut(&7).unwrap().memory[6] = 1; // 500 kbps
    script.lock().unwrap().flags.insert(1, ServoError::OVERHEAT);
    let options = ScanOptions {
        baud_rates: vec![1_000_000, 500_000],
        method: ScanMethod::Broadcast,
    };
    let mut events = Vec::new();
    let found = bus.scan(&options, &mut |e| events.push(e)).await.unwrap();
    let summary: Vec<_> = found
        .iter()
        .map(|s| (s.id, s.baud_rate, s.model, s.firmware, s.error))
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, Some(1_000_000), Some("sts3215"), Some((3, 10)), ServoError::OVERHEAT),
            (7, Some(500_000), Some("sts3215"), Some((3, 10)), ServoError::empty()),
        ]
    );
    assert_eq!(events.len(), 4);
    assert_eq!(script.lock().unwrap().host_baud, 1_000_000, "port put back at its rate");

    let options = ScanOptions {
        baud_rates: vec![500_000],
        method: ScanMethod::Ids(vec![6, 7, 8]),
    };
    let found = bus.scan(&options, &mut |_| {}).await.unwrap();
    assert_eq!(found.iter().map(|s| s.id).collect::<Vec<_>>(), vec![7]);
}

#[tokio::test(start_paused = true)]
async fn lone_servo_gets_id_and_baud_rate() {
    let (mut bus, script) = fake_bus(&[1]);
    let options = ScanOptions::default();
    let servo = bus.setup_lone_servo(&options, 4, 500_000).await.unwrap();
    assert_eq!((servo.id, servo.baud_rate), (4, Some(500_000)));
    let s = script.lock().unwrap();
    let fake = &s.servos[&4];
    assert_eq!(fake.memory[5], 4);
    assert_eq!(fake.memory[6], 1);
    assert_eq!(fake.get(&LOCK), 1);
    assert_eq!(s.host_baud, 500_000);
}

#[tokio::test(start_paused = true)]
async fn lone_servo_setup_refuses_a_crowded_bus_and_taken_ids() {
    let (mut bus, _script) = fake_bus(&[1, 2]);
    assert!(matches!(
        bus.setup_lone_servo(&ScanOptions::default(), 3, 1_000_000).await,
        Err(BusError::NotAlone { found: 2 })
    ));
    assert!(matches!(bus.change_id(1, 2).await, Err(BusError::IdTaken(2))));
    assert!(matches!(
        bus.change_baud_rate(1, 9600).await,
        Err(BusError::UnsupportedBaud(9600))
    ));
}
