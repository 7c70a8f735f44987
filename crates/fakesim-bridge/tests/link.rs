//! The port's lifecycle on the virtual SO-101: a lost port is reopened at its interval, its
//! servos prepared as at start-up, and the arm comes back connected with torque off; a servo
//! that reset its RAM is noticed, configured again and left with torque off. Time is paused,
//! so intervals and bus timeouts elapse instantly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{bus_config, mapping, virtual_calibration};
use fakesim_arm::{Arm, ArmError, BoxFuture, Joint, LinkState};
use fakesim_feetech_arm::{FeetechArm, FeetechArmConfig, Reconnect, Reconnection};
use fakesim_safety::{FaultAction, FaultPolicy, SafetyEvent};
use feetech::bus::Bus;
use feetech::calibration::{SO101_MOTORS, check_servos};
use feetech::configure::{ServoSettings, configure};
use feetech::control_table::{ACCELERATION, TORQUE_ENABLE};
use feetech_emu::{RunningBus, ServoBus, VirtualSo101, spawn_duplex};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::DuplexStream;

const INTERVAL: Duration = Duration::from_secs(1);

/// The virtual bus as a plug the test pulls and pushes back: opening fails while it is out.
#[derive(Clone)]
struct Plug {
    servos: ServoBus,
    plugged: Arc<AtomicBool>,
    prepared: Arc<AtomicUsize>,
    served: Arc<Mutex<Vec<RunningBus>>>,
}

impl Plug {
    fn new(servos: ServoBus) -> Self {
        Self {
            servos,
            plugged: Arc::new(AtomicBool::new(true)),
            prepared: Arc::new(AtomicUsize::new(0)),
            served: Arc::default(),
        }
    }

    fn serve(&self) -> Bus<DuplexStream> {
        let (host, running) = spawn_duplex(self.servos.clone());
        self.served.lock().unwrap().push(running);
        Bus::new(host, bus_config())
    }
}

impl Reconnect<DuplexStream> for Plug {
    fn open(&mut self) -> BoxFuture<'_, Result<Bus<DuplexStream>, String>> {
        let opened = if self.plugged.load(Ordering::SeqCst) {
            Ok(self.serve())
        } else {
            Err("No such file or directory (os error 2)".to_owned())
        };
        Box::pin(async move { opened })
    }

    fn prepare<'a>(&'a mut self, bus: &'a mut Bus<DuplexStream>) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.prepared.fetch_add(1, Ordering::SeqCst);
            prepare(bus).await
        })
    }
}

/// What the daemon does at connect: the servos must hold the calibration, then are configured.
async fn prepare(bus: &mut Bus<DuplexStream>) -> Result<(), String> {
    check_servos(bus, &virtual_calibration())
        .await
        .map_err(|e| e.to_string())?;
    let motors: Vec<(&str, u8)> = SO101_MOTORS.iter().map(|m| (m.name, m.id)).collect();
    configure(bus, &motors, &ServoSettings::default())
        .await
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// An arm on a prepared virtual SO-101 that reopens its port through `plug`.
async fn reconnecting_arm() -> (FeetechArm, Plug) {
    let (servos, _clock) = ServoBus::simulated(&VirtualSo101::config());
    let plug = Plug::new(servos);
    let mut bus = plug.serve();
    prepare(&mut bus).await.unwrap();
    let reconnection = Reconnection {
        reconnect: Box::new(plug.clone()),
        interval: Some(INTERVAL),
    };
    let arm = FeetechArm::spawn_reconnecting(bus, mapping(), FeetechArmConfig::new("virtual"), Some(reconnection));
    (arm, plug)
}

/// Lets simulated time run until `done` holds of the arm's health, an interval at a time.
async fn until(arm: &FeetechArm, done: impl Fn(&fakesim_arm::ArmHealth) -> bool) -> fakesim_arm::ArmHealth {
    for _ in 0..30 {
        let health = arm.health();
        if done(&health) {
            return health;
        }
        tokio::time::sleep(INTERVAL / 4).await;
    }
    panic!(
        "the condition did not hold within 30 quarter intervals: {:?}",
        arm.health().link
    );
}

#[tokio::test(start_paused = true)]
async fn a_lost_port_is_reopened_verified_and_comes_back_with_torque_off() {
    let (arm, plug) = reconnecting_arm().await;
    arm.set_torque(true).await.unwrap();
    assert!((1..=6).all(|id| plug.servos.register(id, &TORQUE_ENABLE).unwrap() == 1));

    plug.plugged.store(false, Ordering::SeqCst);
    plug.servos.unplug();
    let err = loop {
        match arm.read_state().await {
            Err(err @ ArmError::PortGone { .. }) => break err,
            _ => tokio::task::yield_now().await,
        }
    };
    assert!(err.to_string().contains("the serial port virtual is lost"), "{err}");
    let lost = arm.health();
    assert_eq!(lost.link.state, LinkState::Lost);
    assert_eq!(lost.link.losses, 1);
    assert_eq!(
        lost.torque,
        fakesim_arm::Torque::Unknown,
        "torque is not known once the bus is lost"
    );
    assert!(lost.servos.iter().all(|s| s.torque_enabled.is_none()));

    // While the adapter is out, every attempt fails and says why.
    let failing = until(&arm, |h| h.link.attempts >= 3).await;
    assert_eq!(failing.link.state, LinkState::Lost);
    assert!(
        failing
            .last_error
            .as_deref()
            .unwrap_or("")
            .contains("cannot reopen the port"),
        "{failing:?}"
    );
    assert_eq!(plug.prepared.load(Ordering::SeqCst), 0, "nothing was opened to prepare");

    // Plugged back: reopened, prepared as at start-up, torque switched off on every servo.
    plug.servos.replug();
    plug.plugged.store(true, Ordering::SeqCst);
    let back = until(&arm, |h| h.link.state == LinkState::Connected).await;
    assert_eq!(back.link.recoveries, 1);
    assert_eq!(back.link.attempts, 0);
    assert!(back.link.time_lost >= 3 * INTERVAL, "{:?}", back.link.time_lost);
    assert_eq!(plug.prepared.load(Ordering::SeqCst), 1, "prepared as at start-up");
    assert!(back.servos.iter().all(|s| s.torque_enabled == Some(false)));
    assert!((1..=6).all(|id| plug.servos.register(id, &TORQUE_ENABLE).unwrap() == 0));
    assert!(arm.read_state().await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn without_an_interval_a_lost_port_stays_lost() {
    let (servos, _clock) = ServoBus::simulated(&VirtualSo101::config());
    let plug = Plug::new(servos);
    let reconnection = Reconnection {
        reconnect: Box::new(plug.clone()),
        interval: None,
    };
    let arm = FeetechArm::spawn_reconnecting(
        plug.serve(),
        mapping(),
        FeetechArmConfig::new("virtual"),
        Some(reconnection),
    );
    arm.read_state().await.unwrap();
    plug.servos.unplug();
    while arm.read_state().await.is_ok() {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(INTERVAL * 10).await;
    let health = arm.health();
    assert_eq!((health.link.state, health.link.attempts), (LinkState::Lost, 0));
}

#[tokio::test(start_paused = true)]
async fn a_servo_that_resets_is_noticed_configured_again_and_left_without_torque() {
    let (arm, plug) = reconnecting_arm().await;
    arm.set_torque(true).await.unwrap();
    for _ in 0..8 {
        arm.read_state().await.unwrap();
    }
    let mut policy = FaultPolicy::new();
    assert_eq!(policy.evaluate(&arm.health()).action, FaultAction::Continue);

    plug.servos.power_cycle(4).unwrap();
    assert_ne!(
        plug.servos.register(4, &ACCELERATION).unwrap(),
        254,
        "the reset lost the configuration"
    );
    let mut reads = 0;
    while arm.health().servos[3].resets == 0 {
        arm.read_state().await.unwrap();
        reads += 1;
        assert!(reads <= 8, "the reset was not noticed within two state blocks");
    }
    let health = arm.health();
    assert_eq!(health.servos[3].resets, 1);
    assert_eq!(health.servos[3].torque_enabled, Some(false));
    assert_eq!(plug.servos.register(4, &TORQUE_ENABLE).unwrap(), 0, "torque stays off");
    assert_eq!(plug.servos.register(4, &ACCELERATION).unwrap(), 254, "configured again");
    assert_eq!(
        plug.servos.register(3, &TORQUE_ENABLE).unwrap(),
        1,
        "the others keep holding"
    );
    assert!(
        health
            .servos
            .iter()
            .filter(|s| s.joint != Joint::WristFlex)
            .all(|s| s.resets == 0)
    );

    let decision = policy.evaluate(&health);
    assert_eq!(decision.action, FaultAction::Hold);
    assert!(decision.latch);
    assert!(matches!(
        decision.events.as_slice(),
        [SafetyEvent::ServoReset {
            joint: Joint::WristFlex,
            id: 4,
            ..
        }]
    ));
    // Nothing further is found on later readings: the configured servo is the new normal.
    for _ in 0..8 {
        arm.read_state().await.unwrap();
    }
    assert_eq!(arm.health().servos[3].resets, 1);
}
