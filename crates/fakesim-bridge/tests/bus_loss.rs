//! The bus-loss policy in the bridge: a loss is acted on whatever the timing, because the
//! bridge counts the link's losses and recoveries instead of sampling where the link stands.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::twin;
use fakesim_arm::{Arm, ArmError, ArmHealth, ArmState, BoxFuture, Joint, LinkHealth};
use fakesim_bridge::hil::{BridgeConfig, BridgeParts, HardwareBridge, Mode, SyncOption};
use fakesim_bridge::twin::{ScratchTwinKinematics, TwinArm};
use fakesim_safety::{RangeGuard, SafetyEvent, TableGuard};
use fakesim_twin::Scene;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, PoisonError};
use std::time::Duration;

/// The twin as an arm on a port whose link the test writes, counting torque-off writes.
struct ScriptedLink {
    arm: TwinArm,
    link: Mutex<LinkHealth>,
    torque_offs: AtomicU32,
}

impl ScriptedLink {
    fn link(&self) -> std::sync::MutexGuard<'_, LinkHealth> {
        self.link.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Arm for ScriptedLink {
    fn port(&self) -> Option<&str> {
        Some("/dev/virtual")
    }

    fn read_state(&self) -> BoxFuture<'_, Result<ArmState, ArmError>> {
        self.arm.read_state()
    }

    fn command(&self, goals_rad: [f64; 6]) -> BoxFuture<'_, Result<(), ArmError>> {
        self.arm.command(goals_rad)
    }

    fn set_torque(&self, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>> {
        if !enabled {
            self.torque_offs.fetch_add(1, Ordering::SeqCst);
        }
        self.arm.set_torque(enabled)
    }

    fn set_joint_torque(&self, joint: Joint, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>> {
        self.arm.set_joint_torque(joint, enabled)
    }

    fn health(&self) -> ArmHealth {
        ArmHealth {
            link: *self.link(),
            ..self.arm.health()
        }
    }
}

#[tokio::test]
async fn a_loss_and_a_reconnect_inside_one_sleep_of_the_mirror_loop_leave_hil_latched_and_journalled() {
    let arm = Arc::new(ScriptedLink {
        arm: TwinArm::new(twin()),
        link: Mutex::new(LinkHealth::connected()),
        torque_offs: AtomicU32::new(0),
    });
    let twin = twin();
    let ranges = twin.with_sim(|sim| sim.joint_ranges()).await.unwrap();
    let parts = BridgeParts {
        arm: Some(arm.clone()),
        twin,
        range: RangeGuard::model_only(ranges),
        table: TableGuard::default(),
        kinematics: Arc::new(ScratchTwinKinematics::load(&Scene::EmptyTable).unwrap()),
        preview: None,
        config: BridgeConfig {
            // The mirror loop sleeps half a second between two reads.
            mirror_rate_hz: Some(2.0),
            ..BridgeConfig::new(Duration::from_millis(50))
        },
    };
    let (bridge, mut journal) = HardwareBridge::start(parts, Mode::Mirror).await.unwrap();
    bridge
        .set_mode(Mode::Hil, SyncOption::MoveTwinToArm, None)
        .await
        .unwrap();
    let mut samples = bridge.samples();
    let seen = samples.borrow_and_update().seq;
    samples.wait_for(|s| s.seq > seen).await.unwrap();

    // A reading was just published: the loop sleeps until its next one. The port is lost and
    // back within that sleep, so where the link stands reads connected, as before.
    let torque_offs = arm.torque_offs.load(Ordering::SeqCst);
    {
        let mut link = arm.link();
        link.losses += 1;
        link.recoveries += 1;
        link.time_lost = Duration::from_millis(300);
    }
    let seen = samples.borrow_and_update().seq;
    samples.wait_for(|s| s.seq > seen).await.unwrap();

    assert_eq!(bridge.mode(), Mode::Mirror, "a hil whose arm was lost ends in mirror");
    let status = bridge.status();
    assert!(status.estop.latched, "the loss latched the stop");
    assert!(
        status.estop.reason.as_deref().unwrap_or_default().contains("bus lost"),
        "{:?}",
        status.estop.reason
    );
    assert!(
        arm.torque_offs.load(Ordering::SeqCst) > torque_offs,
        "torque is switched off once the port is back"
    );
    let mut events = Vec::new();
    while let Ok(event) = journal.try_recv() {
        events.push(event);
    }
    let link_states: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            SafetyEvent::BusLink { state, .. } => Some(state.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(link_states, ["lost", "connected"], "{events:?}");
    assert!(
        events.iter().any(|e| matches!(e, SafetyEvent::BusLost { .. })),
        "{events:?}"
    );
    bridge.stop().await;
}
