//! A servo that resets (its RAM back to the power-on values) and one that locks up after an
//! overload until its power is cycled.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{send, so101};
use feetech::control_table as ct;
use feetech::protocol::instruction;
use feetech_emu::ServoBus;

fn write(bus: &ServoBus, id: u8, register: &ct::Register, value: i32) {
    send(bus, &instruction::write(id, register.address, &register.encode(value)));
}

fn read(bus: &ServoBus, id: u8, register: &ct::Register) -> i32 {
    bus.register(id, register).unwrap()
}

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
