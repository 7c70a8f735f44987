//! The real arm's tick driver: each tick sends the targets through the safety pipeline, waits
//! out the tick in real time (a tick of the client's clock, [`Hold::Period`], does not: the
//! client paces its ticks, as LeRobot's loop paces a real follower, and the watchdog holds an
//! arm whose client falls silent), then waits for a reading of the arm asked for after that,
//! so the twin (which mirrors the measured joints) shows where the tick left the arm. No tick
//! is answered without such a reading: while servos are silent it waits, and is refused with
//! the reason once the fault reaction has judged the silence (a servo or the bus lost).

use super::bridge::{HardwareBridge, Route};
use super::error::BridgeError;
use super::mode::VerbKind;
use crate::now;
use fakesim_episode::ticks::{Hold, Observed, Ranges, TcpJacobian, TickDriver};
use fakesim_twin::sim::check_substeps;
use fakesim_twin::{ArmSpec, TwinHandle};
use std::time::Duration;
use tokio::time::Instant;

/// Ticks on the real arm in `hil`; a mode change away from `hil` ends the loop at the next
/// tick with [`BridgeError::ModeChanged`].
pub struct ArmTicks {
    bridge: HardwareBridge,
    twin: TwinHandle,
    ranges: Ranges,
    timestep: Duration,
    /// When the last tick ends; the next starts there, so ticks keep their cadence.
    deadline: Option<Instant>,
    /// The joints as last observed: the delta cap's reference.
    measured: Option<[f64; 6]>,
    /// The bridge's obstruction count when the call began: a rise means the shadow held the
    /// arm during the call.
    obstructions: u64,
}

/// The longest a tick waits for the mirror loop to finish any read of the arm at all; longer
/// means the loop is stuck, not that the bus is slow (a silent bus is judged within its
/// replies' timeouts).
const READING_WAIT: Duration = Duration::from_secs(5);

impl ArmTicks {
    /// A driver for the bridge's arm and its twin.
    pub async fn new(bridge: HardwareBridge, twin: TwinHandle) -> Result<Self, BridgeError> {
        let (setpoints, timestep) = twin
            .with_sim(|sim| (sim.ctrl_ranges(), sim.model().opt().timestep))
            .await?;
        let ranges = Ranges {
            joints: bridge.limits(),
            setpoints,
        };
        Ok(ArmTicks {
            twin,
            ranges,
            timestep: Duration::from_secs_f64(timestep),
            deadline: None,
            measured: None,
            obstructions: bridge.obstructions(),
            bridge,
        })
    }

    /// Waits for a read of the arm asked for at `since` or later that every servo answered. A
    /// failed read refuses once the fault reaction that ran on it has judged the failure (the
    /// bus lost, the stop latched naming the servo, `hil` left), with that reason; a failure
    /// not yet judged waits for the next read.
    async fn reading_since(&self, since: std::time::Instant) -> Result<(), BridgeError> {
        let mut readings = self.bridge.readings();
        loop {
            let reading = *readings.borrow_and_update();
            if reading.sent_at >= since {
                if reading.ok {
                    return Ok(());
                }
                self.bridge.check_link()?;
                self.bridge.check_estop()?;
                self.check_still_hil()?;
            }
            match tokio::time::timeout(READING_WAIT, readings.changed()).await {
                Ok(Ok(())) => {}
                _ => return Err(BridgeError::NoReading(READING_WAIT)),
            }
        }
    }

    fn check_still_hil(&self) -> Result<(), BridgeError> {
        if self.bridge.route(VerbKind::Motion)? != Route::Arm {
            return Err(BridgeError::ModeChanged(self.bridge.mode().name()));
        }
        Ok(())
    }

    /// The twin's state as it mirrors the arm, with the goals last sent.
    async fn read(&mut self) -> Result<Observed, BridgeError> {
        let robot = self.twin.with_sim(|sim| sim.robot_state()).await?;
        self.measured = Some(robot.qpos);
        Ok(Observed {
            goals: self.bridge.last_goals().unwrap_or(robot.qpos),
            robot,
            blocked: self.bridge.obstructions() > self.obstructions,
        })
    }

    /// Holds the arm where the twin, mirroring it, shows it (as the shadow's hold does) and
    /// reports it blocked: the shadow held it, and a command of this call may have gone out
    /// after that hold. Not a ramped command: the ramp that command restarted would carry its
    /// targets' offset from the hold on to these goals, driving the joint on past where it is
    /// held (a hand's push, doubled).
    async fn hold_where_it_stands(&mut self) -> Result<Observed, BridgeError> {
        let at = self.read().await?;
        self.bridge.hold(at.robot.qpos).await?;
        Ok(Observed {
            blocked: true,
            goals: at.robot.qpos,
            ..at
        })
    }
}

impl TickDriver for ArmTicks {
    type Error = BridgeError;

    fn ranges(&self) -> Ranges {
        self.ranges
    }

    fn arm(&self) -> &'static ArmSpec {
        self.twin.arm()
    }

    async fn observe(&mut self) -> Result<Observed, BridgeError> {
        self.check_still_hil()?;
        self.read().await
    }

    async fn jacobian(&mut self) -> Result<TcpJacobian, BridgeError> {
        Ok(self.twin.with_sim(|sim| sim.tcp_jacobian()).await?)
    }

    /// A refusal by a layer (a target into the table, out of range, the emergency stop) sends
    /// nothing and ends the loop with that refusal; the arm keeps its last safe goal. Once the
    /// shadow held the arm during the call, nothing more is sent: the arm stays held. A client's
    /// tick finding the arm held since the previous one moves it no further and reports
    /// `blocked`. A hold found after this call's goals went out may have been overtaken by them,
    /// so the arm is held again where it stands.
    async fn apply(&mut self, targets: [f64; 6], hold: Hold) -> Result<Observed, BridgeError> {
        self.check_still_hil()?;
        if self.bridge.obstructions() > self.obstructions {
            return self.read().await;
        }
        if matches!(hold, Hold::Period(_)) && self.bridge.held_since_last_tick() {
            return self.hold_where_it_stands().await;
        }
        let lasts = match hold {
            Hold::Tick => Some(self.bridge.control_period()),
            Hold::Substeps(n) => {
                check_substeps(n)?;
                Some(self.timestep * n)
            }
            Hold::Period(_) => None,
        };
        let measured = match self.measured {
            Some(measured) => measured,
            None => self.read().await?.robot.qpos,
        };
        self.bridge.command(targets, measured).await?;
        let Some(lasts) = lasts else {
            self.reading_since(now()).await?;
            let after = self.read().await?;
            if self.bridge.held_since_last_tick() {
                return self.hold_where_it_stands().await;
            }
            return Ok(after);
        };
        let deadline = self.deadline.unwrap_or_else(Instant::now) + lasts;
        self.deadline = Some(deadline);
        tokio::time::sleep_until(deadline).await;
        self.reading_since(now()).await?;
        let after = self.read().await?;
        if after.blocked {
            return self.hold_where_it_stands().await;
        }
        Ok(after)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::hil::{BridgeConfig, BridgeParts, Mode};
    use crate::twin::{ScratchTwinKinematics, TwinArm};
    use fakesim_arm::{Arm, ArmError, ArmHealth, ArmState, BoxFuture, Joint};
    use fakesim_safety::{RangeGuard, TableGuard};
    use fakesim_twin::{Scene, TwinConfig};
    use std::sync::{Arc, Mutex};

    /// The twin as an arm, keeping every goal it was sent.
    struct Recording {
        arm: TwinArm,
        goals: Mutex<Vec<[f64; 6]>>,
    }

    impl Arm for Recording {
        fn port(&self) -> Option<&str> {
            None
        }

        fn read_state(&self) -> BoxFuture<'_, Result<ArmState, ArmError>> {
            self.arm.read_state()
        }

        fn command(&self, goals_rad: [f64; 6]) -> BoxFuture<'_, Result<(), ArmError>> {
            self.goals.lock().unwrap().push(goals_rad);
            self.arm.command(goals_rad)
        }

        fn set_torque(&self, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>> {
            self.arm.set_torque(enabled)
        }

        fn set_joint_torque(&self, joint: Joint, enabled: bool) -> BoxFuture<'_, Result<(), ArmError>> {
            self.arm.set_joint_torque(joint, enabled)
        }

        fn health(&self) -> ArmHealth {
            self.arm.health()
        }
    }

    fn twin() -> TwinHandle {
        TwinHandle::spawn(TwinConfig {
            scene: Scene::EmptyTable,
            ..TwinConfig::default()
        })
        .unwrap()
    }

    /// A bridge in `hil` on the twin as an arm, keeping every goal sent, and its tick driver.
    async fn started() -> (Arc<Recording>, HardwareBridge, ArmTicks) {
        let recording = Arc::new(Recording {
            arm: TwinArm::new(twin()),
            goals: Mutex::new(Vec::new()),
        });
        let twin = twin();
        let ranges = twin.with_sim(|sim| sim.joint_ranges()).await.unwrap();
        let parts = BridgeParts {
            arm: Some(recording.clone()),
            twin: twin.clone(),
            range: RangeGuard::model_only(ranges),
            table: TableGuard::default(),
            kinematics: Arc::new(ScratchTwinKinematics::load(&Scene::EmptyTable).unwrap()),
            preview: None,
            config: BridgeConfig::new(Duration::from_millis(50)),
        };
        let (bridge, _events) = HardwareBridge::start(parts, Mode::Hil).await.unwrap();
        let ticks = ArmTicks::new(bridge.clone(), twin).await.unwrap();
        (recording, bridge, ticks)
    }

    #[tokio::test]
    async fn a_client_tick_sends_its_goals_through_the_pipeline_and_waits_for_no_deadline() {
        let (recording, bridge, mut ticks) = started().await;
        let start = ticks.observe().await.unwrap().robot.qpos;
        let sent_before = recording.goals.lock().unwrap().len();
        for i in 0..30 {
            let mut targets = start;
            targets[0] += 0.002 * f64::from(i);
            ticks.apply(targets, Hold::Period(None)).await.unwrap();
            let sent = recording.goals.lock().unwrap().clone();
            assert_eq!(sent.len(), sent_before + i as usize + 1, "tick {i}: one command each");
            assert_eq!(sent.last().copied(), bridge.last_goals(), "the pipeline's goals, sent");
            assert_eq!(ticks.deadline, None, "tick {i} set a deadline to wait for");
        }
        ticks.apply(start, Hold::Tick).await.unwrap();
        assert!(ticks.deadline.is_some(), "the model's tick waits out its period");
        bridge.stop().await;
    }

    #[tokio::test]
    async fn a_hold_after_a_tick_that_raced_the_shadows_hold_sends_the_pose_it_stands_at() {
        let (recording, bridge, mut ticks) = started().await;
        let start = ticks.observe().await.unwrap().robot.qpos;
        // The shadow holds the elbow where a hand pushed it; a client's tick, checked before
        // that hold, still sends the pose from before the push, which restarts the ramp.
        let mut pushed = start;
        pushed[2] += 0.1;
        bridge.hold(pushed).await.unwrap();
        bridge.command(start, pushed).await.unwrap();
        let held = ticks.hold_where_it_stands().await.unwrap();
        assert!(held.blocked);
        let sent = recording.goals.lock().unwrap().last().copied();
        assert_eq!(sent, Some(held.robot.qpos), "the hold sends where the arm stands");
        assert_eq!(bridge.last_goals(), sent);
        assert_eq!(held.goals, held.robot.qpos);
        bridge.stop().await;
    }
}
