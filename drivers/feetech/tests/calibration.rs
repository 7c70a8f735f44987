#![allow(clippy::unwrap_used, clippy::expect_used)]
//! LeRobot calibration files, directory layout, apply/verify and the procedure's bus steps.

mod common;

use std::collections::BTreeMap;
use std::ffi::OsString;

use common::fake_bus;
use feetech::bus::EepromWrite;
use feetech::calibration::{
    self, ArmKind, ArmRole, Calibration, CalibrationError, Difference, MotorCalibration, SO101_MOTORS, Sweep,
    calibration_path, calibration_root_with, find_calibration,
};
use feetech::control_table::{HOMING_OFFSET, MAX_POSITION_LIMIT, MIN_POSITION_LIMIT, PRESENT_POSITION, TORQUE_ENABLE};
use feetech::protocol::instruction::Request;

const LEROBOT_FILE: &str = r#"{
    "shoulder_pan": {
        "id": 1,
        "drive_mode": 0,
        "homing_offset": -1234,
        "range_min": 812,
        "range_max": 3301
    },
    "gripper": {
        "id": 6,
        "drive_mode": 0,
        "homing_offset": -50,
        "range_min": 2020,
        "range_max": 3400
    }
}"#;

fn motor(id: u8, homing_offset: i32, range_min: i32, range_max: i32) -> MotorCalibration {
    MotorCalibration {
        id,
        drive_mode: 0,
        homing_offset,
        range_min,
        range_max,
    }
}

#[test]
fn lerobot_json_round_trips_byte_for_byte() {
    let calibration = Calibration::from_json(LEROBOT_FILE).unwrap();
    assert_eq!(calibration.motors["shoulder_pan"], motor(1, -1234, 812, 3301));
    assert_eq!(
        calibration.motors["gripper"].range(),
        feetech::units::CalibratedRange {
            min: 2020,
            max: 3400,
            inverted: false
        }
    );
    // Written in id order with LeRobot's 4-space indentation.
    assert_eq!(calibration.to_json(), LEROBOT_FILE);
}

#[test]
fn save_and_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = calibration_path(dir.path(), ArmKind::So101Follower, "my_arm");
    let calibration = Calibration::from_json(LEROBOT_FILE).unwrap();
    calibration.save(&path).unwrap();
    assert!(path.ends_with("robots/so101_follower/my_arm.json"));
    assert_eq!(Calibration::load(&path).unwrap(), calibration);
    assert!(matches!(
        Calibration::load(&dir.path().join("missing.json")),
        Err(CalibrationError::Io { .. })
    ));
    std::fs::write(&path, "{\"x\": {\"id\": 1}}").unwrap();
    assert!(matches!(Calibration::load(&path), Err(CalibrationError::Json { .. })));
}

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
    let map: BTreeMap<String, OsString> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
        .collect();
    move |key| map.get(key).cloned()
}

#[test]
fn calibration_root_follows_lerobot_precedence() {
    let root = |pairs: &[(&str, &str)]| calibration_root_with(env(pairs)).unwrap();
    let all = [
        ("HF_LEROBOT_CALIBRATION", "/a"),
        ("HF_LEROBOT_HOME", "/b"),
        ("HF_HOME", "/c"),
        ("XDG_CACHE_HOME", "/d"),
        ("HOME", "/home/u"),
    ];
    assert_eq!(root(&all), std::path::PathBuf::from("/a"));
    assert_eq!(root(&all[1..]), std::path::PathBuf::from("/b/calibration"));
    assert_eq!(root(&all[2..]), std::path::PathBuf::from("/c/lerobot/calibration"));
    assert_eq!(
        root(&all[3..]),
        std::path::PathBuf::from("/d/huggingface/lerobot/calibration")
    );
    assert_eq!(
        root(&all[4..]),
        std::path::PathBuf::from("/home/u/.cache/huggingface/lerobot/calibration")
    );
    assert_eq!(
        root(&[("HF_HOME", "~/hf"), ("HOME", "/home/u")]),
        std::path::PathBuf::from("/home/u/hf/lerobot/calibration")
    );
    assert!(matches!(calibration_root_with(env(&[])), Err(CalibrationError::NoHome)));
}

#[test]
fn finds_files_in_both_lerobot_layouts() {
    let dir = tempfile::tempdir().unwrap();
    let calibration = Calibration::from_json(LEROBOT_FILE).unwrap();
    assert_eq!(find_calibration(dir.path(), ArmRole::Leader, "lead"), None);
    let old = calibration_path(dir.path(), ArmKind::So101Leader, "lead");
    calibration.save(&old).unwrap();
    assert_eq!(find_calibration(dir.path(), ArmRole::Leader, "lead"), Some(old.clone()));
    let new = calibration_path(dir.path(), ArmKind::SoLeader, "lead");
    calibration.save(&new).unwrap();
    assert!(new.ends_with("teleoperators/so_leader/lead.json"));
    assert_eq!(find_calibration(dir.path(), ArmRole::Leader, "lead"), Some(new));
    assert_eq!(find_calibration(dir.path(), ArmRole::Follower, "lead"), None);
}

#[test]
fn validation_rejects_values_a_servo_cannot_hold() {
    for bad in [
        motor(1, 2048, 0, 4095),
        motor(1, 0, -1, 100),
        motor(1, 0, 300, 200),
        motor(1, 0, 0, 4096),
        motor(254, 0, 0, 1),
    ] {
        assert!(bad.validate("m").is_err(), "{bad:?}");
    }
    assert!(motor(1, -2047, 0, 4095).validate("m").is_ok());
}

#[tokio::test(start_paused = true)]
async fn apply_writes_only_differences_and_verify_agrees() {
    let (mut bus, script) = fake_bus(&[1, 6]);
    let calibration = Calibration::from_json(LEROBOT_FILE).unwrap();
    let applied = calibration::apply(&mut bus, &calibration).await.unwrap();
    assert_eq!(applied[0].motor, "shoulder_pan");
    assert!(
        applied
            .iter()
            .all(|m| m.writes.iter().all(|(_, w)| *w == EepromWrite::Written))
    );
    {
        let s = script.lock().unwrap();
        assert_eq!(s.servos[&1].get(&HOMING_OFFSET), -1234);
        assert_eq!(s.servos[&6].get(&MAX_POSITION_LIMIT), 3400);
    }
    assert!(calibration::verify(&mut bus, &calibration).await.unwrap().is_empty());
    let stored = calibration::read_from_servos(&mut bus, &[("shoulder_pan", 1), ("gripper", 6)])
        .await
        .unwrap();
    assert_eq!(stored, calibration);

    let again = calibration::apply(&mut bus, &calibration).await.unwrap();
    assert!(
        again
            .iter()
            .all(|m| m.writes.iter().all(|(_, w)| *w == EepromWrite::Unchanged))
    );

    script
        .lock()
        .unwrap()
        .servos
        .get_mut(&6)
        .unwrap()
        .set(&MIN_POSITION_LIMIT, 7);
    script.lock().unwrap().silent.insert(1);
    let differences = calibration::verify(&mut bus, &calibration).await.unwrap();
    assert_eq!(differences.len(), 2);
    assert!(matches!(&differences[0], Difference::Unreachable { id: 1, .. }));
    assert!(matches!(
        &differences[1],
        Difference::Value {
            id: 6,
            register: "Min_Position_Limit",
            file: 2020,
            servo: 7,
            ..
        }
    ));
}

#[tokio::test(start_paused = true)]
async fn invalid_file_is_never_written() {
    let (mut bus, script) = fake_bus(&[1]);
    let mut calibration = Calibration::default();
    calibration.motors.insert("a".into(), motor(1, 5000, 0, 10));
    assert!(matches!(
        calibration::apply(&mut bus, &calibration).await,
        Err(CalibrationError::InvalidMotor { .. })
    ));
    assert!(script.lock().unwrap().log.is_empty());
}

#[tokio::test(start_paused = true)]
async fn procedure_steps_produce_a_calibration() {
    let ids: Vec<u8> = SO101_MOTORS.iter().map(|m| m.id).collect();
    let (mut bus, script) = fake_bus(&ids);
    script
        .lock()
        .unwrap()
        .servos
        .get_mut(&2)
        .unwrap()
        .set(&TORQUE_ENABLE, 1);
    calibration::prepare(&mut bus, &SO101_MOTORS).await.unwrap();
    assert_eq!(script.lock().unwrap().servos[&2].get(&TORQUE_ENABLE), 0);

    // Middle pose: shoulder_pan is at 3000 (the fake does not apply offsets itself).
    script
        .lock()
        .unwrap()
        .servos
        .get_mut(&1)
        .unwrap()
        .set(&PRESENT_POSITION, 3000);
    let offsets = calibration::home_at_middle(&mut bus, &SO101_MOTORS).await.unwrap();
    assert_eq!(offsets[&1], 953);
    assert_eq!(offsets[&2], 1);
    assert_eq!(script.lock().unwrap().servos[&1].get(&HOMING_OFFSET), 953);

    let mut sweep = Sweep::new(&SO101_MOTORS);
    for reading in [2047, 1000, 2047, 3500] {
        for id in &ids {
            script
                .lock()
                .unwrap()
                .servos
                .get_mut(id)
                .unwrap()
                .set(&PRESENT_POSITION, reading);
        }
        assert!(sweep.sample(&mut bus).await.unwrap().is_empty());
    }
    assert_eq!(sweep.extent(1), Some((1000, 3500)));
    assert_eq!(sweep.extent(5), None, "wrist_roll is not swept");
    let result = sweep.finish(&offsets).unwrap();
    assert_eq!(result.motors["shoulder_pan"], motor(1, 953, 1000, 3500));
    assert_eq!(result.motors["wrist_roll"], motor(5, 1, 0, 4095));
    calibration::apply(&mut bus, &result).await.unwrap();
    assert!(calibration::verify(&mut bus, &result).await.unwrap().is_empty());
    // Only Lock/Torque/limits/offset writes were sent; no SYNC_WRITE.
    assert!(
        !script
            .lock()
            .unwrap()
            .log
            .iter()
            .any(|(_, r)| matches!(r, Request::SyncWrite { .. }))
    );
}

#[test]
fn sweep_without_readings_is_an_error() {
    let sweep = Sweep::new(&SO101_MOTORS);
    assert!(matches!(
        sweep.finish(&BTreeMap::new()),
        Err(CalibrationError::InvalidMotor { .. })
    ));
}
