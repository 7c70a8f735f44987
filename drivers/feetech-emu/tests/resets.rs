//! A servo that resets (its RAM back to the power-on values) and one that locks up after an
//! overload until its power is cycled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{frames, read, send, so101, write};
use feetech::control_table as ct;
use feetech::protocol::instruction;
use feetech::protocol::status::ServoError;
use feetech_emu::ServoBus;
use feetech_emu::faults::FaultWindow;

#[test]
fn a_ram_reset_restores_the_power_on_values_and_keeps_the_eeprom() {
    let (bus, clock) = so101();
    let start = bus.present_position(2).unwrap();
    // What a driver does at connect: unlock, configure, persist, lock, drive.
    write(&bus, 2, &ct::LOCK, 0);
    write(&bus, 2, &ct::MAX_TORQUE_LIMIT, 800);
    write(&bus, 2, &ct::LOCK, 1);
    write(&bus, 2, &ct::RETURN_DELAY_TIME, 9); // locked: not persisted
    write(&bus, 2, &ct::ACCELERATION, 40);
    write(&bus, 2, &ct::TORQUE_LIMIT, 500);
    write(&bus, 2, &ct::TORQUE_ENABLE, 1);
    write(&bus, 2, &ct::GOAL_POSITION, start + 300);
    send(
        &bus,
        &instruction::reg_write(2, ct::GOAL_POSITION.address, &ct::GOAL_POSITION.encode(start)),
    );
    clock.advance(Duration::from_millis(150));
    let moved = bus.present_position(2).unwrap();
    assert!(
        moved > start && moved < start + 300,
        "{start} -> {moved}: still on its way"
    );
    let untouched: Vec<i32> = ct::ALL.iter().map(|register| read(&bus, 1, register)).collect();

    bus.reset_ram(2).unwrap();
    assert_eq!(read(&bus, 2, &ct::TORQUE_ENABLE), 0);
    assert_eq!(read(&bus, 2, &ct::LOCK), 1, "a servo powers on locked");
    assert_eq!(read(&bus, 2, &ct::ACCELERATION), 0);
    assert_eq!(read(&bus, 2, &ct::TORQUE_LIMIT), 800, "copied from Max_Torque_Limit");
    assert_eq!(
        read(&bus, 2, &ct::ASYNC_WRITE_FLAG),
        0,
        "the buffered REG_WRITE is gone"
    );
    let stopped = bus.present_position(2).unwrap();
    assert_eq!(read(&bus, 2, &ct::GOAL_POSITION), stopped);
    assert_eq!(read(&bus, 2, &ct::MAX_TORQUE_LIMIT), 800, "the persisted EEPROM stays");
    let persisted_delay = bus.persisted_register(2, &ct::RETURN_DELAY_TIME).unwrap();
    assert_ne!(persisted_delay, 9);
    assert_eq!(
        read(&bus, 2, &ct::RETURN_DELAY_TIME),
        persisted_delay,
        "the unpersisted write is lost"
    );
    let after: Vec<i32> = ct::ALL.iter().map(|register| read(&bus, 1, register)).collect();
    assert_eq!(after, untouched, "the other servos are not reset");
    clock.advance(Duration::from_millis(500));
    assert_eq!(
        bus.present_position(2).unwrap(),
        stopped,
        "torque off: it stays where it was"
    );
    assert!(bus.reset_ram(9).is_err());
}

/// Whether servo `id` answers a PING.
fn answers(bus: &ServoBus, id: u8) -> bool {
    !send(bus, &instruction::ping(id)).is_empty()
}

#[test]
fn a_servo_set_to_lock_up_goes_silent_at_an_overload_until_its_power_is_cycled() {
    let (bus, _) = so101();
    bus.update_faults(|faults| {
        faults.lockup_after_overload.insert(3);
    });
    assert!(
        answers(&bus, 3) && !bus.is_locked_up(3).unwrap(),
        "no overload, no lock-up"
    );
    bus.update_faults(|faults| {
        faults.forced_errors.insert(3, ServoError::OVERLOAD);
    });
    assert!(bus.is_locked_up(3).unwrap());
    assert!(!answers(&bus, 3));
    write(&bus, 3, &ct::ACCELERATION, 40);
    assert_eq!(
        read(&bus, 3, &ct::ACCELERATION),
        0,
        "a locked-up servo executes nothing"
    );
    let ids: Vec<u8> = frames(&send(&bus, &instruction::sync_read(ct::ID.address, 1, &[2, 3, 4])))
        .iter()
        .map(|frame| frame.id)
        .collect();
    assert_eq!(ids, [2, 4]);

    bus.update_faults(|faults| {
        faults.forced_errors.clear();
    });
    bus.reset_ram(3).unwrap();
    assert!(
        bus.is_locked_up(3).unwrap() && !answers(&bus, 3),
        "only a power cycle frees it"
    );
    bus.power_cycle(3).unwrap();
    assert!(!bus.is_locked_up(3).unwrap() && answers(&bus, 3));
    assert!(bus.is_locked_up(9).is_err());
}

#[test]
fn an_overload_window_locks_the_servo_up_even_when_nobody_asked_meanwhile() {
    let (bus, clock) = so101();
    let window = |id| FaultWindow {
        id,
        error: ServoError::OVERLOAD,
        from: Duration::from_secs(1),
        until: Some(Duration::from_secs(2)),
    };
    bus.update_faults(|faults| {
        faults.lockup_after_overload.insert(4);
        faults.windows.extend([window(4), window(5)]);
    });
    clock.advance(Duration::from_millis(500));
    assert!(answers(&bus, 4));
    clock.advance(Duration::from_millis(2500));
    assert!(!answers(&bus, 4), "the window passed while the bus was idle");
    assert!(answers(&bus, 5), "an overload alone does not lock a servo up");
    bus.power_cycle(4).unwrap();
    assert!(answers(&bus, 4), "the overload is over: the servo stays free");
}
