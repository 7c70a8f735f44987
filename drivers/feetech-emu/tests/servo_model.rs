//! EEPROM lock, torque, goal tracking in simulated time, homing offset and readings.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{bus_with, read, send, so101, write};
use feetech::control_table as ct;
use feetech::protocol::instruction;
use feetech::protocol::status::ServoError;
use feetech_emu::{EmuConfig, ServoBus, ServoConfig};

#[test]
fn locked_eeprom_writes_apply_until_power_off_only() {
    let (bus, _) = bus_with(&[1]);
    assert_eq!(read(&bus, 1, &ct::LOCK), 1, "servos power up locked");
    write(&bus, 1, &ct::MAX_POSITION_LIMIT, 3000);
    assert_eq!(read(&bus, 1, &ct::MAX_POSITION_LIMIT), 3000);
    assert_eq!(bus.persisted_register(1, &ct::MAX_POSITION_LIMIT).unwrap(), 4095);
    bus.power_cycle(1).unwrap();
    assert_eq!(read(&bus, 1, &ct::MAX_POSITION_LIMIT), 4095);

    write(&bus, 1, &ct::LOCK, 0);
    write(&bus, 1, &ct::MAX_POSITION_LIMIT, 3000);
    write(&bus, 1, &ct::LOCK, 1);
    bus.power_cycle(1).unwrap();
    assert_eq!(read(&bus, 1, &ct::MAX_POSITION_LIMIT), 3000);
    assert_eq!(read(&bus, 1, &ct::LOCK), 1);
}

#[test]
fn ram_registers_reset_at_power_on() {
    let (bus, _) = bus_with(&[1]);
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    write(&bus, 1, &ct::ACCELERATION, 30);
    bus.power_cycle(1).unwrap();
    assert_eq!(read(&bus, 1, &ct::TORQUE_ENABLE), 0);
    assert_eq!(read(&bus, 1, &ct::ACCELERATION), 0);
}

#[test]
fn torque_off_does_not_move() {
    let (bus, clock) = bus_with(&[1]);
    write(&bus, 1, &ct::GOAL_POSITION, 3000);
    clock.advance(Duration::from_secs(3));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 2048);
    assert_eq!(read(&bus, 1, &ct::MOVING), 0);
    assert_eq!(read(&bus, 1, &ct::PRESENT_CURRENT), 0);
}

#[test]
fn enabling_torque_holds_the_present_pose() {
    let (bus, clock) = bus_with(&[1]);
    write(&bus, 1, &ct::GOAL_POSITION, 3000);
    bus.set_present_position(1, 1000).unwrap();
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    assert_eq!(read(&bus, 1, &ct::GOAL_POSITION), 1000);
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 1000);
}

#[test]
fn goal_tracking_respects_the_speed_and_acceleration_limits() {
    let (bus, clock) = bus_with(&[1]);
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    // 20 units of 50 steps/s = 1000 steps/s; 50 units of 100 steps/s^2 = 5000 steps/s^2.
    write(&bus, 1, &ct::GOAL_VELOCITY, 20);
    write(&bus, 1, &ct::ACCELERATION, 50);
    write(&bus, 1, &ct::GOAL_POSITION, 4000);

    let tick = Duration::from_millis(10);
    let mut previous = read(&bus, 1, &ct::PRESENT_POSITION);
    for _ in 0..100 {
        clock.advance(tick);
        let present = read(&bus, 1, &ct::PRESENT_POSITION);
        assert!(present - previous <= 11, "{previous} -> {present} in 10 ms");
        assert!(read(&bus, 1, &ct::PRESENT_VELOCITY) <= 20);
        assert_eq!(read(&bus, 1, &ct::MOVING), 1);
        previous = present;
    }
    // After 1 s: 0.2 s ramp (100 steps) then 0.8 s at 1000 steps/s (800 steps).
    let after_one_second = read(&bus, 1, &ct::PRESENT_POSITION);
    assert!(
        (2048 + 895..=2048 + 905).contains(&after_one_second),
        "{after_one_second}"
    );
    assert_eq!(read(&bus, 1, &ct::PRESENT_VELOCITY), 20);
    assert!(read(&bus, 1, &ct::PRESENT_LOAD) > 0);
    assert!(read(&bus, 1, &ct::PRESENT_CURRENT) > 0);

    clock.advance(Duration::from_secs(2));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 4000);
    assert_eq!(read(&bus, 1, &ct::MOVING), 0);
    assert_eq!(read(&bus, 1, &ct::PRESENT_VELOCITY), 0);
}

#[test]
fn unlimited_goal_velocity_moves_at_the_servo_maximum() {
    let (bus, clock) = bus_with(&[1]);
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    write(&bus, 1, &ct::GOAL_POSITION, 48);
    clock.advance(Duration::from_millis(300));
    let velocity = read(&bus, 1, &ct::PRESENT_VELOCITY);
    assert_eq!(velocity, -68, "3400 steps/s downwards in units of 50 steps/s");
    clock.advance(Duration::from_millis(500));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 48);
}

#[test]
fn goals_are_clamped_to_the_position_limits() {
    let (bus, clock) = so101();
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    write(&bus, 1, &ct::GOAL_POSITION, 4000);
    clock.advance(Duration::from_secs(3));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 3298);
    assert_eq!(read(&bus, 1, &ct::PRESENT_GOAL_POSITION), 3298);
}

#[test]
fn homing_offset_shifts_and_wraps_the_present_position() {
    let config = ServoConfig {
        raw_position: 100,
        ..ServoConfig::new(1)
    };
    let (bus, _) = ServoBus::simulated(&EmuConfig::new(vec![config]));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 100);
    write(&bus, 1, &ct::HOMING_OFFSET, -1000);
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 1100);
    write(&bus, 1, &ct::HOMING_OFFSET, 200);
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 3996, "100 - 200 wraps to 3996");
    assert_eq!(bus.read_bytes(1, ct::HOMING_OFFSET.address, 2).unwrap(), [200, 0]);
}

#[test]
fn lerobot_half_turn_homing_makes_the_pose_read_2047() {
    let (bus, _) = bus_with(&[1]);
    bus.set_raw_position(1, 3100).unwrap();
    write(&bus, 1, &ct::LOCK, 0);
    write(&bus, 1, &ct::HOMING_OFFSET, 3100 - 2047);
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 2047);
    bus.power_cycle(1).unwrap();
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 2047, "offset persisted");
}

#[test]
fn torque_enable_128_recentres_the_present_position() {
    let (bus, _) = bus_with(&[1]);
    bus.set_present_position(1, 500).unwrap();
    write(&bus, 1, &ct::LOCK, 0);
    write(&bus, 1, &ct::TORQUE_ENABLE, 128);
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 2048);
    assert_eq!(read(&bus, 1, &ct::HOMING_OFFSET), 500 - 2048);
    assert_eq!(read(&bus, 1, &ct::TORQUE_ENABLE), 0, "recentring leaves torque off");
}

#[test]
fn hand_motion_is_seen_and_a_servo_with_torque_drives_back() {
    let (bus, clock) = so101();
    bus.set_present_position(2, 1500).unwrap();
    assert_eq!(read(&bus, 2, &ct::PRESENT_POSITION), 1500);
    bus.set_present_position(2, 4100).unwrap();
    assert_eq!(read(&bus, 2, &ct::PRESENT_POSITION), 4, "positions wrap");

    write(&bus, 3, &ct::TORQUE_ENABLE, 1);
    bus.set_present_position(3, 1800).unwrap();
    clock.advance(Duration::from_secs(1));
    assert_eq!(read(&bus, 3, &ct::PRESENT_POSITION), 2047);
}

#[test]
fn zero_torque_limit_leaves_the_motor_free() {
    let (bus, clock) = bus_with(&[1]);
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    write(&bus, 1, &ct::TORQUE_LIMIT, 0);
    write(&bus, 1, &ct::GOAL_POSITION, 3000);
    clock.advance(Duration::from_secs(2));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 2048);
}

#[test]
fn fine_speed_unit_phase_bit_changes_the_velocity_scale() {
    let (bus, clock) = bus_with(&[1]);
    write(&bus, 1, &ct::PHASE, 0x04);
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    write(&bus, 1, &ct::GOAL_VELOCITY, 500);
    write(&bus, 1, &ct::GOAL_POSITION, 4000);
    clock.advance(Duration::from_millis(500));
    assert_eq!(
        read(&bus, 1, &ct::PRESENT_VELOCITY),
        500,
        "500 steps/s in 1 step/s units"
    );
}

#[test]
fn voltage_and_temperature_limits_raise_status_bits() {
    let (bus, _) = bus_with(&[1]);
    assert_eq!(read(&bus, 1, &ct::PRESENT_VOLTAGE), 120);
    assert_eq!(read(&bus, 1, &ct::STATUS), 0);
    // The "8 V problem": a 12 V servo shipped with an 8.0 V ceiling.
    write(&bus, 1, &ct::MAX_VOLTAGE_LIMIT, 80);
    assert_eq!(read(&bus, 1, &ct::STATUS), i32::from(ServoError::VOLTAGE.bits()));
    write(&bus, 1, &ct::MAX_VOLTAGE_LIMIT, 140);
    bus.set_supply_voltage(1, 30).unwrap();
    assert_eq!(read(&bus, 1, &ct::STATUS), i32::from(ServoError::VOLTAGE.bits()));
    bus.set_supply_voltage(1, 120).unwrap();
    write(&bus, 1, &ct::MAX_TEMPERATURE_LIMIT, 20);
    assert_eq!(read(&bus, 1, &ct::STATUS), i32::from(ServoError::OVERHEAT.bits()));
    let ping = send(&bus, &instruction::ping(1));
    assert_eq!(
        ping.get(4),
        Some(&ServoError::OVERHEAT.bits()),
        "error byte of the reply"
    );
}

#[test]
fn a_sustained_overload_heats_the_servo_past_its_limit() {
    let (bus, clock) = bus_with(&[1]);
    bus.update_faults(|faults| {
        faults.forced_errors.insert(1, ServoError::OVERLOAD);
    });
    assert_eq!(read(&bus, 1, &ct::PRESENT_LOAD), 1000);
    clock.advance(Duration::from_secs(60));
    let warm = read(&bus, 1, &ct::PRESENT_TEMPERATURE);
    assert!(warm > 30, "{warm} C after a minute at full load");
    assert_eq!(read(&bus, 1, &ct::STATUS), i32::from(ServoError::OVERLOAD.bits()));
    clock.advance(Duration::from_secs(1200));
    assert!(read(&bus, 1, &ct::PRESENT_TEMPERATURE) > 70);
    let expected = ServoError::OVERLOAD | ServoError::OVERHEAT;
    assert_eq!(read(&bus, 1, &ct::STATUS), i32::from(expected.bits()));
}

#[test]
fn a_servo_with_a_response_acts_late_and_turns_no_faster_than_its_cap() {
    let config = ServoConfig {
        response: feetech_emu::Response {
            delay: Duration::from_millis(20),
            max_speed_steps_per_s: 500.0,
            ..feetech_emu::Response::default()
        },
        ..ServoConfig::new(1)
    };
    let (bus, clock) = ServoBus::simulated(&EmuConfig::new(vec![config]));
    write(&bus, 1, &ct::TORQUE_ENABLE, 1);
    write(&bus, 1, &ct::GOAL_POSITION, 3000);
    for _ in 0..3 {
        clock.advance(Duration::from_millis(5));
        assert_eq!(
            read(&bus, 1, &ct::PRESENT_POSITION),
            2048,
            "the goal is still on its way"
        );
    }
    let mut previous = 2048;
    for _ in 0..100 {
        clock.advance(Duration::from_millis(10));
        let present = read(&bus, 1, &ct::PRESENT_POSITION);
        assert!(
            present - previous <= 6,
            "{previous} -> {present}: faster than 500 steps/s"
        );
        previous = present;
    }
    assert!(previous > 2400 && previous < 3000, "{previous}");
    clock.advance(Duration::from_secs(2));
    assert_eq!(read(&bus, 1, &ct::PRESENT_POSITION), 3000);
}
