#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Control table data, value encoding (little-endian, sign-magnitude), state block, baud table.

use feetech::control_table::{
    self, ALL, Access, Area, BAUD_RATES, HOMING_OFFSET, MIN_POSITION_LIMIT, PRESENT_LOAD, PRESENT_POSITION, Register,
    STATE_BLOCK, STATE_BLOCK_ADDRESS, STATE_BLOCK_LEN, ServoState, baud_index, baud_rate, decode_sign_magnitude,
    encode_sign_magnitude,
};
use feetech::protocol::status::ServoError;
use proptest::prelude::*;

#[test]
fn registers_do_not_overlap_and_are_sorted() {
    for pair in ALL.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        assert!(
            u16::from(a.address) + u16::from(a.size) <= u16::from(b.address),
            "{} overlaps {}",
            a.name,
            b.name
        );
    }
}

#[test]
fn eeprom_is_below_address_40() {
    for register in ALL {
        let expected = if register.address < 40 { Area::Eeprom } else { Area::Ram };
        assert_eq!(register.area, expected, "{}", register.name);
    }
}

#[test]
fn sign_bits_match_the_reference() {
    let signed: Vec<(&str, u8)> = ALL.iter().filter_map(|r| r.sign_bit.map(|b| (r.name, b))).collect();
    assert_eq!(
        signed,
        vec![
            ("Homing_Offset", 11),
            ("Goal_Position", 15),
            ("Goal_Velocity", 15),
            ("Present_Position", 15),
            ("Present_Velocity", 15),
            ("Present_Load", 10),
            ("Present_Goal_Position", 15),
            ("Present_Current", 15),
        ]
    );
}

#[test]
fn key_addresses() {
    let expect = [
        ("ID", 5, 1),
        ("Baud_Rate", 6, 1),
        ("Min_Position_Limit", 9, 2),
        ("Max_Position_Limit", 11, 2),
        ("Homing_Offset", 31, 2),
        ("Torque_Enable", 40, 1),
        ("Goal_Position", 42, 2),
        ("Lock", 55, 1),
        ("Present_Position", 56, 2),
        ("Present_Current", 69, 2),
        ("Model_Number", 3, 2),
    ];
    for (name, address, size) in expect {
        let register = control_table::by_name(name).unwrap();
        assert_eq!((register.address, register.size), (address, size), "{name}");
        assert_eq!(control_table::by_address(address), Some(register));
    }
    assert_eq!(PRESENT_POSITION.access, Access::Read);
}

#[test]
fn sign_magnitude_examples() {
    assert_eq!(HOMING_OFFSET.encode(-100), vec![0x64, 0x08]);
    assert_eq!(control_table::GOAL_POSITION.encode(-5), vec![0x05, 0x80]);
    assert_eq!(PRESENT_LOAD.decode(&[0x10, 0x04]), -16);
    assert_eq!(HOMING_OFFSET.try_encode(2048).unwrap_err().max, 2047);
    assert_eq!(HOMING_OFFSET.encode(5000), vec![0xFF, 0x07]);
    assert!(MIN_POSITION_LIMIT.try_encode(-1).is_err());
    assert_eq!(MIN_POSITION_LIMIT.max_value(), 65535);
}

#[test]
fn state_block_spans_position_to_current() {
    assert_eq!((STATE_BLOCK_ADDRESS, STATE_BLOCK_LEN), (56, 15));
    let mut block = vec![0_u8; 15];
    block[0..2].copy_from_slice(&PRESENT_POSITION.encode(-300));
    block[2..4].copy_from_slice(&[0x02, 0x80]); // velocity -2
    block[4..6].copy_from_slice(&[0x20, 0x04]); // load -32
    block[6] = 121; // 12.1 V
    block[7] = 41;
    block[9] = 0x20; // status: overload
    block[10] = 1;
    block[13..15].copy_from_slice(&[0x64, 0x00]);
    let state = ServoState::from_block(&block).unwrap();
    assert_eq!(
        state,
        ServoState {
            position: -300,
            velocity: -2,
            load: -32,
            voltage: 121,
            temperature: 41,
            status: ServoError::OVERLOAD,
            moving: true,
            current: 100,
        }
    );
    assert!(ServoState::from_block(&block[..14]).is_none());
    assert_eq!(STATE_BLOCK.len(), 8);
}

#[test]
fn baud_table_uses_feetech_indices() {
    assert_eq!(BAUD_RATES[0], 1_000_000);
    assert_eq!(baud_rate(5), Some(76_800));
    assert_eq!(baud_rate(7), Some(38_400));
    assert_eq!(baud_rate(8), None);
    assert_eq!(baud_index(57_600), Some(6));
    assert_eq!(baud_index(19_200), None);
    assert_eq!(control_table::model_name(777), Some("sts3215"));
}

fn arb_register() -> impl Strategy<Value = Register> {
    prop::sample::select(ALL)
}

proptest! {
    #[test]
    fn register_values_round_trip(register in arb_register(), seed in any::<i32>()) {
        let span = i64::from(register.max_value()) - i64::from(register.min_value()) + 1;
        let value = i32::try_from(i64::from(register.min_value()) + i64::from(seed).rem_euclid(span)).unwrap();
        let bytes = register.try_encode(value).unwrap();
        prop_assert_eq!(bytes.len(), usize::from(register.size));
        prop_assert_eq!(register.decode(&bytes), value);
    }

    #[test]
    fn out_of_range_values_are_rejected_and_clamped(register in arb_register(), value in any::<i32>()) {
        let fits = (register.min_value()..=register.max_value()).contains(&value);
        prop_assert_eq!(register.try_encode(value).is_ok(), fits);
        let clamped = value.clamp(register.min_value(), register.max_value());
        prop_assert_eq!(register.decode(&register.encode(value)), clamped);
    }

    #[test]
    fn sign_magnitude_round_trips(bit in 1_u8..31, value in any::<i32>()) {
        let limit = 1_i64 << bit;
        match encode_sign_magnitude(value, bit) {
            Some(raw) => {
                prop_assert!(i64::from(value).abs() < limit);
                prop_assert_eq!(decode_sign_magnitude(raw, bit), value);
            }
            None => prop_assert!(i64::from(value).abs() >= limit),
        }
    }

    #[test]
    fn decode_ignores_bits_above_the_sign(raw in any::<u16>()) {
        let value = HOMING_OFFSET.decode(&raw.to_le_bytes());
        prop_assert!(value.abs() <= 2047);
        let canonical = u32::from(raw) & 0x0FFF;
        prop_assert_eq!(value, decode_sign_magnitude(canonical, 11));
    }
}
