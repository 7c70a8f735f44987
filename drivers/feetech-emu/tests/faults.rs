//! Every injected fault, switched on and off at run time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{bus_with, frames, send, so101};
use feetech::control_table as ct;
use feetech::protocol::frame::{DecodeError, FrameDecoder};
use feetech::protocol::instruction;
use feetech::protocol::status::ServoError;
use std::time::Duration;

use feetech_emu::faults::FaultWindow;
use feetech_emu::{EmuConfig, FaultConfig, ServoBus, ServoConfig};

/// Pings servo 1 `n` times and records for each ping whether an intact reply came back.
fn ping_outcomes(bus: &ServoBus, n: usize) -> Vec<Outcome> {
    (0..n)
        .map(|_| {
            let mut decoder = FrameDecoder::new();
            decoder.push(&send(bus, &instruction::ping(1)));
            match decoder.next_frame() {
                None => Outcome::Nothing,
                Some(Ok(_)) => Outcome::Intact,
                Some(Err(DecodeError::Checksum { .. })) => Outcome::Corrupted,
            }
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Intact,
    Corrupted,
    Nothing,
}

fn count(outcomes: &[Outcome], wanted: Outcome) -> usize {
    outcomes.iter().filter(|o| **o == wanted).count()
}

fn seeded_bus(seed: u64, faults: FaultConfig) -> ServoBus {
    let config = EmuConfig {
        seed,
        faults,
        ..EmuConfig::new(vec![ServoConfig::new(1)])
    };
    ServoBus::simulated(&config).0
}

#[test]
fn corrupted_checksums_follow_the_probability_and_switch_off() {
    let (bus, _) = bus_with(&[1]);
    bus.update_faults(|f| f.corrupt_checksum = 1.0);
    assert_eq!(count(&ping_outcomes(&bus, 20), Outcome::Corrupted), 20);

    bus.update_faults(|f| f.corrupt_checksum = 0.3);
    let outcomes = ping_outcomes(&bus, 1000);
    let corrupted = count(&outcomes, Outcome::Corrupted);
    assert!((230..=370).contains(&corrupted), "{corrupted} of 1000");
    assert_eq!(count(&outcomes, Outcome::Intact), 1000 - corrupted);

    bus.set_faults(FaultConfig::none());
    assert_eq!(count(&ping_outcomes(&bus, 20), Outcome::Intact), 20);
}

#[test]
fn dropped_replies_follow_the_probability() {
    let (bus, _) = bus_with(&[1]);
    bus.update_faults(|f| f.drop_reply = 1.0);
    assert_eq!(count(&ping_outcomes(&bus, 20), Outcome::Nothing), 20);
    bus.update_faults(|f| f.drop_reply = 0.5);
    let dropped = count(&ping_outcomes(&bus, 1000), Outcome::Nothing);
    assert!((430..=570).contains(&dropped), "{dropped} of 1000");
}

#[test]
fn probabilistic_faults_are_reproducible_from_the_seed() {
    let faults = FaultConfig {
        corrupt_checksum: 0.2,
        drop_reply: 0.2,
        ..FaultConfig::none()
    };
    let first = ping_outcomes(&seeded_bus(11, faults.clone()), 200);
    let again = ping_outcomes(&seeded_bus(11, faults.clone()), 200);
    let other = ping_outcomes(&seeded_bus(12, faults), 200);
    assert_eq!(first, again);
    assert_ne!(first, other);
}

#[test]
fn a_silent_servo_neither_answers_nor_executes() {
    let (bus, _) = so101();
    bus.update_faults(|f| {
        f.silent.insert(3);
    });
    assert!(send(&bus, &instruction::ping(3)).is_empty());
    send(&bus, &instruction::write(3, ct::ACCELERATION.address, &[40]));
    assert_eq!(bus.register(3, &ct::ACCELERATION).unwrap(), 0);
    let ids: Vec<u8> = frames(&send(&bus, &instruction::sync_read(ct::ID.address, 1, &[2, 3, 4])))
        .iter()
        .map(|f| f.id)
        .collect();
    assert_eq!(ids, [2, 4], "sync read goes on past the silent servo");

    bus.update_faults(|f| f.silent.clear());
    assert_eq!(frames(&send(&bus, &instruction::ping(3))).len(), 1);
}

#[test]
fn forced_error_bits_appear_in_every_reply_and_the_status_register() {
    let (bus, _) = so101();
    let cases = [ServoError::OVERLOAD, ServoError::OVERHEAT, ServoError::VOLTAGE];
    for flag in cases {
        bus.update_faults(|f| {
            f.forced_errors.insert(6, flag);
        });
        let ping = frames(&send(&bus, &instruction::ping(6)));
        assert_eq!(ping[0].body, flag.bits());
        let sync = frames(&send(&bus, &instruction::sync_read(ct::STATUS.address, 1, &[5, 6])));
        assert_eq!(sync[0].body, 0, "servo 5 is healthy");
        assert_eq!(sync[1].body, flag.bits());
        assert_eq!(sync[1].params, [flag.bits()], "Status register");
        let write = frames(&send(&bus, &instruction::write(6, ct::ACCELERATION.address, &[1])));
        assert_eq!(write[0].body, flag.bits());
    }
    bus.update_faults(|f| f.forced_errors.clear());
    assert_eq!(frames(&send(&bus, &instruction::ping(6)))[0].body, 0);
    assert_eq!(bus.register(6, &ct::STATUS).unwrap(), 0);
}

#[test]
fn a_timed_overload_starts_and_clears_on_the_bus_clock() {
    let (bus, clock) = so101();
    bus.update_faults(|f| {
        f.windows.push(FaultWindow {
            id: 3,
            error: ServoError::OVERLOAD,
            from: Duration::from_secs(2),
            until: Some(Duration::from_secs(5)),
        });
    });
    let status = |bus: &ServoBus| frames(&send(bus, &instruction::ping(3)))[0].body;
    assert_eq!(status(&bus), 0, "not yet");
    clock.advance(Duration::from_secs(2));
    assert_eq!(status(&bus), ServoError::OVERLOAD.bits(), "started");
    assert_eq!(
        bus.register(3, &ct::STATUS).unwrap(),
        i32::from(ServoError::OVERLOAD.bits())
    );
    clock.advance(Duration::from_millis(2999));
    assert_eq!(status(&bus), ServoError::OVERLOAD.bits(), "still present");
    clock.advance(Duration::from_millis(1));
    assert_eq!(status(&bus), 0, "cleared");
    assert_eq!(bus.register(3, &ct::STATUS).unwrap(), 0);
}

#[test]
fn every_write_is_logged_and_eeprom_writes_are_counted() {
    let (bus, clock) = so101();
    clock.advance(Duration::from_millis(10));
    send(&bus, &instruction::write(2, ct::LOCK.address, &[0]));
    send(&bus, &instruction::write(2, ct::P_COEFFICIENT.address, &[16]));
    send(&bus, &instruction::write(2, ct::TORQUE_ENABLE.address, &[1]));
    send(
        &bus,
        &instruction::sync_write(ct::GOAL_POSITION.address, 2, &[(2, [0x00, 0x09]), (3, [0x10, 0x08])]),
    );
    send(
        &bus,
        &instruction::reg_write(4, ct::MIN_POSITION_LIMIT.address, &[0x10, 0x00]),
    );
    send(&bus, &instruction::action(0xFE));
    assert_eq!(bus.eeprom_writes(2), 1, "Lock and Torque_Enable are RAM");
    assert_eq!(bus.eeprom_writes(4), 1, "the REG_WRITE counts once it runs");
    assert_eq!(bus.eeprom_writes(3), 0);
    let log = bus.write_log();
    assert_eq!(log.len(), 6);
    let goal = &log[3];
    assert_eq!((goal.id, goal.value(&ct::GOAL_POSITION)), (2, Some(0x900)));
    assert!(goal.torque_before && !log[2].torque_before);
    assert_eq!(goal.present_before, bus.present_position(2).unwrap());
    assert_eq!(goal.at, Duration::from_millis(10));
    assert_eq!(log[4].value(&ct::GOAL_POSITION), Some(0x810));
    assert_eq!(log[0].value(&ct::GOAL_POSITION), None);
    bus.clear_write_log();
    assert!(bus.write_log().is_empty());
}
