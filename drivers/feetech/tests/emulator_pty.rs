#![allow(clippy::unwrap_used, clippy::expect_used)]
//! End to end: the driver opens the emulator's pseudo-terminal at 1 Mbaud like a real
//! adapter. Scan, a full calibration round trip with a LeRobot file, and every injected
//! fault surfacing as its typed error.

use std::time::Duration;

use feetech::bus::{Bus, BusConfig, BusError, ScanMethod, ScanOptions};
use feetech::calibration::{
    self, ArmKind, ArmRole, Calibration, SO101_MOTORS, Sweep, calibration_path, find_calibration,
};
use feetech::control_table::{
    DEFAULT_BAUD_RATE, GOAL_POSITION, HOMING_OFFSET, LOCK, MAX_POSITION_LIMIT, MIN_POSITION_LIMIT, PRESENT_POSITION,
    TORQUE_ENABLE,
};
use feetech::protocol::status::ServoError;
use feetech_emu::{EmuConfig, PtyBus, ServoConfig, VirtualSo101, serve_pty};
use tokio_serial::SerialStream;

const IDS: [u8; 6] = [1, 2, 3, 4, 5, 6];

fn config(retries: u32) -> BusConfig {
    BusConfig {
        timeout: Duration::from_millis(300),
        retries,
        echo: false,
    }
}

async fn start(config_: EmuConfig, retries: u32) -> (PtyBus, Bus<SerialStream>) {
    let emu = serve_pty(config_).await.unwrap();
    let bus = Bus::open(emu.path(), DEFAULT_BAUD_RATE, config(retries)).unwrap();
    (emu, bus)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scan_finds_the_virtual_arm() {
    let mut servos = VirtualSo101::servos();
    servos.push(ServoConfig::new(9));
    let (emu, mut bus) = start(EmuConfig::new(servos), 1).await;
    let options = ScanOptions {
        baud_rates: vec![DEFAULT_BAUD_RATE, 500_000],
        method: ScanMethod::Broadcast,
    };
    let found = bus.scan(&options, &mut |_| {}).await.unwrap();
    let ids: Vec<u8> = found.iter().map(|s| s.id).collect();
    assert_eq!(ids, vec![1, 2, 3, 4, 5, 6, 9]);
    for servo in &found {
        assert_eq!(servo.baud_rate, Some(DEFAULT_BAUD_RATE));
        assert_eq!(servo.model_number, Some(777));
        assert_eq!(servo.model, Some("sts3215"));
        assert_eq!(servo.firmware, Some((3, 10)));
    }
    let per_id = ScanMethod::Ids(vec![0, 1, 7, 9]);
    let found = bus.scan_here(&per_id, &mut |_| {}).await.unwrap();
    assert_eq!(found.iter().map(|s| s.id).collect::<Vec<_>>(), vec![1, 9]);
    emu.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lone_new_servo_gets_id_and_baud_rate() {
    let (emu, mut bus) = start(EmuConfig::new(vec![ServoConfig::new(1)]), 1).await;
    let options = ScanOptions {
        baud_rates: vec![DEFAULT_BAUD_RATE],
        method: ScanMethod::Broadcast,
    };
    let servo = bus.setup_lone_servo(&options, 6, 500_000).await.unwrap();
    assert_eq!((servo.id, servo.baud_rate), (6, Some(500_000)));
    assert_eq!(bus.ping(6).await.unwrap().error, ServoError::empty());
    let handle = emu.servos();
    assert_eq!(handle.persisted_register(6, &feetech::control_table::ID).unwrap(), 6);
    assert_eq!(
        handle
            .persisted_register(6, &feetech::control_table::BAUD_RATE)
            .unwrap(),
        1
    );
    emu.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calibration_round_trip_with_a_lerobot_file() {
    // Freshly assembled arm: no offsets, shafts wherever the horns ended up.
    let servos: Vec<ServoConfig> = SO101_MOTORS
        .iter()
        .zip([3000_u16, 1200, 2600, 500, 2048, 3900])
        .map(|(motor, raw)| ServoConfig {
            raw_position: raw,
            ..ServoConfig::new(motor.id)
        })
        .collect();
    let (emu, mut bus) = start(EmuConfig::new(servos), 2).await;
    let arm = emu.servos().clone();

    calibration::prepare(&mut bus, &SO101_MOTORS).await.unwrap();
    let offsets = calibration::home_at_middle(&mut bus, &SO101_MOTORS).await.unwrap();
    for id in IDS {
        assert_eq!(arm.present_position(id).unwrap(), 2047, "servo {id} reads the middle");
    }

    // The user sweeps every joint from the middle up to one end, then down to the other.
    // The gripper's raw encoder crosses 0/4095 (hidden by its homing offset); the elbow's
    // "middle" pose was poor, so its readings cross 0/4095 and the offset must move.
    let mut sweep = Sweep::new(&SO101_MOTORS);
    let extents = [
        (800, 3300),
        (900, 3200),
        (-500, 2100),
        (960, 3130),
        (0, 4095),
        (1900, 3200),
    ];
    let path = |(low, high): (i32, i32), step: i32| {
        if step <= 10 {
            2047 + (high - 2047) * step / 10
        } else {
            high - (high - low) * (step - 10) / 10
        }
    };
    for step in 0..=20 {
        for (motor, extent) in SO101_MOTORS.iter().zip(extents) {
            arm.set_present_position(motor.id, path(extent, step)).unwrap();
        }
        assert!(sweep.sample(&mut bus).await.unwrap().is_empty());
    }
    let result = sweep.finish(&offsets).unwrap();
    let range = |name: &str| (result.motors[name].range_min, result.motors[name].range_max);
    assert_eq!(range("shoulder_pan"), (800, 3300));
    assert_eq!(range("gripper"), (1900, 3200));
    assert_eq!(range("wrist_roll"), (0, 4095));
    let (elbow_min, elbow_max) = range("elbow_flex");
    assert_eq!(elbow_max - elbow_min, 2600);
    assert!(result.motors["elbow_flex"].homing_offset != offsets[&3]);
    calibration::apply(&mut bus, &result).await.unwrap();
    // Every swept joint rests at its low end, which must now read range_min.
    for motor in SO101_MOTORS.iter().filter(|m| !m.is_full_turn()) {
        let expected = result.motors[motor.name].range_min;
        assert_eq!(arm.present_position(motor.id).unwrap(), expected, "{}", motor.name);
    }

    // Save where LeRobot looks, read it back, and check servos against it.
    let root = tempfile::tempdir().unwrap();
    let path = calibration_path(root.path(), ArmKind::SoFollower, "twin");
    result.save(&path).unwrap();
    assert_eq!(
        find_calibration(root.path(), ArmRole::Follower, "twin"),
        Some(path.clone())
    );
    let loaded = Calibration::load(&path).unwrap();
    assert_eq!(loaded, result);
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["gripper"]["id"], 6);
    assert_eq!(json["gripper"]["drive_mode"], 0);
    assert!(calibration::verify(&mut bus, &loaded).await.unwrap().is_empty());
    for (name, motor) in &loaded.motors {
        assert_eq!(
            arm.persisted_register(motor.id, &HOMING_OFFSET).unwrap(),
            motor.homing_offset,
            "{name}"
        );
        assert_eq!(
            arm.persisted_register(motor.id, &MIN_POSITION_LIMIT).unwrap(),
            motor.range_min,
            "{name}"
        );
        assert_eq!(
            arm.persisted_register(motor.id, &MAX_POSITION_LIMIT).unwrap(),
            motor.range_max,
            "{name}"
        );
        assert_eq!(arm.register(motor.id, &LOCK).unwrap(), 1, "{name} locked again");
    }
    // Survives a power cycle; a second apply writes nothing.
    for id in IDS {
        arm.power_cycle(id).unwrap();
    }
    assert!(calibration::verify(&mut bus, &loaded).await.unwrap().is_empty());
    let again = calibration::apply(&mut bus, &loaded).await.unwrap();
    assert!(
        again
            .iter()
            .all(|m| { m.writes.iter().all(|(_, w)| *w == feetech::bus::EepromWrite::Unchanged) })
    );
    emu.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_faults_surface_as_typed_errors() {
    let (emu, mut bus) = start(VirtualSo101::config(), 1).await;
    let arm = emu.servos().clone();

    // Error bits: data still arrives, flags are typed per reply.
    arm.update_faults(|f| {
        f.forced_errors.insert(2, ServoError::OVERLOAD);
        f.forced_errors.insert(4, ServoError::VOLTAGE | ServoError::OVERHEAT);
    });
    let states = bus.sync_read_state(&IDS).await.unwrap();
    assert_eq!(states[0].as_ref().unwrap().error, ServoError::empty());
    assert_eq!(states[1].as_ref().unwrap().error, ServoError::OVERLOAD);
    assert_eq!(
        states[3].as_ref().unwrap().error,
        ServoError::VOLTAGE | ServoError::OVERHEAT
    );
    assert!(matches!(
        bus.ping(2).await.unwrap().checked(),
        Err(BusError::Servo {
            id: 2,
            error: ServoError::OVERLOAD
        })
    ));
    arm.update_faults(|f| f.forced_errors.clear());

    // A servo that stops answering: the others still report.
    arm.update_faults(|f| {
        f.silent.insert(3);
    });
    let positions = bus.sync_read_positions(&IDS).await.unwrap();
    assert!(matches!(positions[2], Err(BusError::NoReply { id: 3 })));
    assert_eq!(positions.iter().filter(|r| r.is_ok()).count(), 5);
    assert!(matches!(bus.ping(3).await, Err(BusError::NoReply { id: 3 })));
    arm.update_faults(|f| f.silent.clear());

    // Every checksum corrupted: retried, then reported.
    arm.update_faults(|f| f.corrupt_checksum = 1.0);
    assert!(matches!(
        bus.read_register(1, &PRESENT_POSITION).await,
        Err(BusError::Checksum { id: 1 })
    ));
    let positions = bus.sync_read_positions(&[1, 2]).await.unwrap();
    assert!(positions.iter().all(|r| matches!(r, Err(BusError::Checksum { .. }))));
    arm.update_faults(|f| f.corrupt_checksum = 0.0);

    // Every reply dropped.
    arm.update_faults(|f| f.drop_reply = 1.0);
    assert!(matches!(bus.ping(1).await, Err(BusError::NoReply { id: 1 })));
    arm.update_faults(|f| f.drop_reply = 0.0);
    assert!(bus.ping(1).await.is_ok(), "healthy again");

    // An echoing adapter, with the driver told about it.
    arm.update_faults(|f| f.echo = true);
    let mut echo = *bus.config();
    echo.echo = true;
    bus.set_config(echo);
    assert_eq!(bus.read_register(1, &PRESENT_POSITION).await.unwrap().value, 2047);
    assert!(bus.sync_read_state(&IDS).await.unwrap().iter().all(Result::is_ok));
    bus.write_register(1, &TORQUE_ENABLE, 1).await.unwrap();
    bus.sync_write_goal_positions(&[(1, 2100)]).await.unwrap();
    assert_eq!(bus.read_register(1, &GOAL_POSITION).await.unwrap().value, 2100);

    // The port goes away.
    arm.unplug();
    let gone = bus.ping(1).await;
    assert!(matches!(gone, Err(BusError::PortGone(_))), "{gone:?}");
    emu.finished().await.unwrap();
}
