#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Calibrations as they are in the field, against emulated arms holding them: the servos
//! agree with the file, a stale arm is refused naming the joint, writing the file fixes it
//! safely, and connect-time configuration writes only what differs.

use std::time::Duration;

use feetech::bus::{Bus, BusConfig};
use feetech::calibration::{self, Calibration, CalibrationError, Difference, SO101_MOTORS, UnusableCalibration};
use feetech::configure::{GripperLimits, ServoSettings, configure};
use feetech::control_table::{
    self as ct, GOAL_POSITION, HOMING_OFFSET, MAX_POSITION_LIMIT, MIN_POSITION_LIMIT, PRESENT_POSITION, TORQUE_ENABLE,
};
use feetech_emu::field::field_calibrations;
use feetech_emu::{EmuConfig, RunningBus, ServoBus, VirtualSo101, spawn_duplex};
use tokio::io::DuplexStream;

fn bus_config() -> BusConfig {
    BusConfig {
        timeout: Duration::from_millis(200),
        retries: 1,
        echo: false,
    }
}

/// An emulated arm holding `calibration` (simulated clock: nothing moves on its own).
fn arm_holding(calibration: &Calibration) -> (ServoBus, Bus<DuplexStream>, RunningBus) {
    let servos = VirtualSo101::holding(calibration, &[]).unwrap();
    let (emu, _clock) = ServoBus::simulated(&EmuConfig::new(servos));
    let (host, running) = spawn_duplex(emu.clone());
    (emu, Bus::new(host, bus_config()), running)
}

fn motors(calibration: &Calibration) -> Vec<(&str, u8)> {
    calibration.by_id().into_iter().map(|(name, m)| (name, m.id)).collect()
}

#[tokio::test]
async fn every_field_calibration_is_held_by_its_emulated_arm() {
    for (name, calibration) in field_calibrations() {
        let (emu, mut bus, running) = arm_holding(&calibration);
        calibration::check_servos(&mut bus, &calibration)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for (motor, m) in calibration.by_id() {
            let present = emu.present_position(m.id).unwrap();
            assert!(
                (m.range_min..=m.range_max).contains(&present),
                "{name} {motor}: rests at {present}, outside {}..{}",
                m.range_min,
                m.range_max
            );
            assert_eq!(present, (m.range_min + m.range_max) / 2, "{name} {motor}");
        }
        running.shutdown().await.unwrap();
    }
}

#[tokio::test]
async fn a_stale_arm_is_refused_naming_the_joint_values_and_fix_then_writing_the_file_fixes_it() {
    let [(_, file), (_, other), ..] = <[_; 4]>::try_from(field_calibrations()).unwrap();
    // The servos were calibrated as `other`; the file says `file`.
    let (emu, mut bus, running) = arm_holding(&other);
    let error = calibration::check_servos(&mut bus, &file).await.unwrap_err();
    let CalibrationError::Stale(stale) = &error else {
        panic!("{error}")
    };
    assert_eq!(
        stale.differences.len(),
        16,
        "three registers on six joints, but wrist_roll limits agree"
    );
    let text = error.to_string();
    let pan_file = file.motors["shoulder_pan"].homing_offset;
    let pan_servo = other.motors["shoulder_pan"].homing_offset;
    assert!(
        text.contains(&format!(
            "joint shoulder_pan (id 1): Homing_Offset is {pan_servo} in the servo, {pan_file} in the file"
        )),
        "{text}"
    );
    assert!(
        text.contains("--write-calibration-to-servos") && text.contains("calibrate"),
        "{text}"
    );

    // Torque on at the servos' present pose, then the file is written into the servos.
    for id in 1..=6 {
        bus.torque_on(id).await.unwrap();
    }
    emu.clear_write_log();
    let applied = calibration::apply(&mut bus, &file).await.unwrap();
    assert!(applied.iter().all(|m| m.writes.len() == 3));
    calibration::check_servos(&mut bus, &file).await.unwrap();
    for (motor, m) in file.by_id() {
        assert_eq!(
            emu.persisted_register(m.id, &HOMING_OFFSET).unwrap(),
            m.homing_offset,
            "{motor}"
        );
        assert_eq!(emu.persisted_register(m.id, &MIN_POSITION_LIMIT).unwrap(), m.range_min);
        assert_eq!(emu.persisted_register(m.id, &MAX_POSITION_LIMIT).unwrap(), m.range_max);
        assert_eq!(emu.register(m.id, &ct::LOCK).unwrap(), 1, "{motor}: relocked");
        assert_eq!(emu.register(m.id, &TORQUE_ENABLE).unwrap(), 1, "{motor}: torque back");
        // The new offset moved the present reading; the goal followed before torque returned.
        let present = emu.register(m.id, &PRESENT_POSITION).unwrap();
        assert_eq!(emu.register(m.id, &GOAL_POSITION).unwrap(), present, "{motor}");
    }
    for id in 1..=6 {
        let log: Vec<_> = emu.write_log().into_iter().filter(|r| r.id == id).collect();
        let eeprom_at = log.iter().position(|r| r.touches_eeprom()).unwrap();
        assert!(
            !log[eeprom_at].torque_before,
            "servo {id}: EEPROM written with torque on"
        );
        let torque_back = log.iter().rposition(|r| r.value(&TORQUE_ENABLE) == Some(1)).unwrap();
        let goal = log.iter().rposition(|r| r.value(&GOAL_POSITION).is_some()).unwrap();
        assert!(goal < torque_back, "servo {id}: goal set before torque returns");
        assert_eq!(log[goal].value(&GOAL_POSITION), Some(log[goal].present_before));
    }
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_arm_that_does_not_answer_is_named() {
    let calibration = VirtualSo101::calibration();
    let (emu, mut bus, running) = arm_holding(&calibration);
    emu.update_faults(|f| {
        f.silent.insert(4);
    });
    let text = calibration::check_servos(&mut bus, &calibration)
        .await
        .unwrap_err()
        .to_string();
    assert!(text.contains("joint wrist_flex (id 4) does not answer"), "{text}");
    assert!(text.contains("fakesim-hil scan"), "{text}");
    let CalibrationError::Stale(stale) = calibration::check_servos(&mut bus, &calibration).await.unwrap_err() else {
        panic!()
    };
    assert!(matches!(
        &stale.differences[..],
        [Difference::Unreachable { id: 4, .. }]
    ));
    running.shutdown().await.unwrap();
}

#[test]
fn unusable_files_name_the_joint_and_what_to_do() {
    let good = VirtualSo101::calibration();
    let mut missing = good.clone();
    missing.motors.remove("elbow_flex");
    let mut duplicate = good.clone();
    duplicate.motors.get_mut("gripper").unwrap().id = 2;
    let mut flat = good.clone();
    flat.motors.get_mut("wrist_flex").unwrap().range_max = flat.motors["wrist_flex"].range_min;
    let mut wild = good.clone();
    wild.motors.get_mut("shoulder_pan").unwrap().homing_offset = 4000;
    assert_eq!(good.check_usable(&SO101_MOTORS), Ok(()));
    let cases = [
        (missing, "joint elbow_flex (id 3) is missing"),
        (duplicate, "joints shoulder_lift and gripper both use servo id 2"),
        (flat, "joint wrist_flex: calibrated range"),
        (wild, "joint shoulder_pan: homing_offset 4000"),
    ];
    for (calibration, expected) in cases {
        let error = calibration.check_usable(&SO101_MOTORS).unwrap_err();
        let text = error.to_string();
        assert!(text.starts_with(expected), "{text}");
        assert!(text.contains("fakesim-hil"), "{text}");
        if let UnusableCalibration::ZeroWidth { min, max, .. } = error {
            assert_eq!(min, max);
        }
    }
}

#[tokio::test]
async fn connect_configures_what_differs_and_nothing_else() {
    let calibration = field_calibrations().remove(0).1;
    let (emu, mut bus, running) = arm_holding(&calibration);
    // Configured once; then one gripper value changes in the settings.
    let settings = ServoSettings::default();
    let motors = motors(&calibration);
    configure(&mut bus, &motors, &settings).await.unwrap();
    let off = ServoSettings {
        gripper: GripperLimits {
            overload_torque: 30,
            ..settings.gripper
        },
        ..settings
    };
    emu.clear_write_log();
    let report = configure(&mut bus, &motors, &off).await.unwrap();
    let written: Vec<(u8, Vec<&str>)> = report
        .iter()
        .filter(|s| !s.written.is_empty())
        .map(|s| (s.id, s.written.clone()))
        .collect();
    assert_eq!(written, vec![(6, vec!["Overload_Torque"])]);
    assert_eq!(emu.eeprom_writes(6), 1, "one EEPROM write on the gripper");
    for id in 1..=5 {
        assert_eq!(emu.eeprom_writes(id), 0, "servo {id} untouched");
    }
    // Nothing differs any more: configuring again writes nothing at all.
    emu.clear_write_log();
    let again = configure(&mut bus, &motors, &off).await.unwrap();
    assert!(again.iter().all(|s| s.written.is_empty()));
    assert!(emu.write_log().is_empty(), "{:?}", emu.write_log());
    running.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_factory_arm_gets_the_follower_settings() {
    let calibration = field_calibrations().remove(1).1;
    let (emu, mut bus, running) = arm_holding(&calibration);
    let settings = ServoSettings::default();
    let report = configure(&mut bus, &motors(&calibration), &settings).await.unwrap();
    for servo in &report {
        let expected: &[&str] = if servo.motor == "gripper" {
            &[
                "P_Coefficient",
                "Acceleration",
                "Maximum_Acceleration",
                "Max_Torque_Limit",
                "Torque_Limit",
                "Protection_Current",
                "Overload_Torque",
            ]
        } else {
            &["P_Coefficient", "Acceleration", "Maximum_Acceleration"]
        };
        assert_eq!(servo.written, expected, "{}", servo.motor);
        assert_eq!(
            emu.eeprom_writes(servo.id),
            if servo.motor == "gripper" { 4 } else { 1 }
        );
    }
    for id in 1..=6 {
        assert_eq!(emu.persisted_register(id, &ct::P_COEFFICIENT).unwrap(), 16);
        assert_eq!(emu.persisted_register(id, &ct::D_COEFFICIENT).unwrap(), 32);
        assert_eq!(emu.register(id, &ct::ACCELERATION).unwrap(), 254);
        assert_eq!(emu.register(id, &ct::OPERATING_MODE).unwrap(), 0);
    }
    assert_eq!(emu.persisted_register(6, &ct::MAX_TORQUE_LIMIT).unwrap(), 500);
    assert_eq!(emu.persisted_register(6, &ct::PROTECTION_CURRENT).unwrap(), 250);
    assert_eq!(emu.persisted_register(6, &ct::OVERLOAD_TORQUE).unwrap(), 25);
    assert_eq!(emu.persisted_register(5, &ct::MAX_TORQUE_LIMIT).unwrap(), 1000);
    running.shutdown().await.unwrap();
}

#[test]
fn settings_are_overridable_from_the_config_file_and_refuse_unknown_keys() {
    let settings: ServoSettings = toml::from_str("p = 12\n[gripper]\nmax-torque = 400\n").unwrap();
    assert_eq!(settings.p, 12);
    assert_eq!(settings.d, 32);
    assert_eq!(settings.gripper.max_torque, 400);
    assert_eq!(settings.gripper.overload_torque, 25);
    assert!(toml::from_str::<ServoSettings>("pp = 1").is_err());
}
