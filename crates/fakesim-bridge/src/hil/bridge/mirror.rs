//! The mirror loop: reads the real arm as fast as the bus allows, writes each reading into the
//! twin at once, then runs the fault reaction (the bus-loss policy's verdicts included), the
//! shadow and the watchdog on it, and tells waiting ticks how the reading went.

use super::{HardwareBridge, Reading, Sample, clamp_into, lock};
use crate::hil::mode::Mode;
use crate::hil::shadow::{Finding, JointResidual, ShadowInput};
use crate::now;
use fakesim_arm::{Arm, Joint};
use fakesim_safety::SafetyEvent;
use fakesim_safety::bus_loss::LinkChange;
use fakesim_twin::JointValues;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

impl HardwareBridge {
    /// Reads the arm once and writes the reading into the twin at once; then reacts to the
    /// faults the read left in the arm's health (also after a failed read), runs the shadow
    /// and publishes the sample, so whoever sees a sample finds the reaction to it done.
    /// False when the read failed.
    async fn mirror_once(&self, arm: &dyn Arm, seq: u64) -> bool {
        let sent_at = now();
        let reading = arm.read_state().await;
        let read_at = now();
        let (real, load_percent) = match reading {
            Ok(state) => (
                state.positions_rad(),
                state.joints.map(|j| j.servo.map_or(0.0, |s| s.load_percent)),
            ),
            Err(e) => {
                tracing::debug!(error = %e, "mirror read failed");
                self.react_to_faults(arm).await;
                self.inner.readings.send_replace(Reading { sent_at, ok: false });
                return false;
            }
        };
        let mode = self.mode();
        let ranges = &self.inner.twin_ranges;
        let clamped: [bool; 6] = std::array::from_fn(|i| real[i] < ranges[i].lo || real[i] > ranges[i].hi);
        if mode != Mode::Sim {
            self.flag_clamped(&clamped);
        }
        let twin_rad = if mode == Mode::Sim {
            self.inner.twin.with_sim(|sim| sim.arm_qpos()).await
        } else {
            let clamped = clamp_into(&real, &self.inner.twin_ranges);
            self.inner
                .twin
                .try_with_sim(move |sim| {
                    sim.set_joint_positions(&JointValues::Ordered(clamped.to_vec()), true)?;
                    Ok(sim.arm_qpos())
                })
                .await
        };
        let mirrored_at = now();
        self.react_to_faults(arm).await;
        let twin_rad = match twin_rad {
            Ok(twin_rad) => twin_rad,
            Err(e) => {
                tracing::warn!(error = %e, "cannot mirror the arm into the twin");
                return true;
            }
        };
        let shadow = if mode == Mode::Sim {
            None
        } else {
            let pipeline = &self.inner.pipeline;
            let input = ShadowInput {
                at: read_at,
                measured: real,
                load_percent,
                goals: pipeline.last_goals().filter(|_| pipeline.torque_on()),
            };
            Some(self.shade(input).await)
        };
        self.inner.samples.send_replace(Sample {
            seq,
            at: read_at,
            real_rad: Some(real),
            twin_rad,
            clamped,
            shadow,
            sent_at,
            mirrored_at,
        });
        if mode == Mode::Hil {
            if let Some(event) = self.inner.pipeline.check_watchdog(real).await {
                self.record(event);
            }
            self.guard_stalls(read_at, load_percent, real).await;
        }
        self.inner.readings.send_replace(Reading { sent_at, ok: true });
        true
    }

    /// Runs the stall guard on a reading in `hil`: a joint straining against its goal for its
    /// whole window has its torque switched off, and the stop latches.
    async fn guard_stalls(&self, at: Instant, load_percent: [f64; 6], measured: [f64; 6]) {
        let pipeline = &self.inner.pipeline;
        let Some(goals) = pipeline.last_goals().filter(|_| pipeline.torque_on()) else {
            return;
        };
        let stalled = lock(&self.inner.stall).observe(at, load_percent, goals, measured);
        for stall in stalled {
            let lasted_ms = u64::try_from(stall.lasted.as_millis()).unwrap_or(u64::MAX);
            self.record(SafetyEvent::JointStalled {
                joint: stall.joint,
                load_percent: stall.load_percent,
                error_rad: stall.error_rad,
                lasted_ms,
            });
            let cause = format!(
                "stall: {} strained at {:.0} % load {:.3} rad from its goal for {:.1} s; its torque is off. Free it, \
                 reset the stop, then SetMode(hil)",
                stall.joint,
                stall.load_percent.abs(),
                stall.error_rad.abs(),
                stall.lasted.as_secs_f64()
            );
            self.record(pipeline.stop_joint(stall.joint, &cause).await);
        }
    }

    /// Runs the fault policy on the arm's health and reacts, recording what it raised; then
    /// acts on what became of the bus, as the bus-loss policy counted it: a loss leaves `hil`
    /// for `mirror` (never to return by itself), a port back has the shadow start afresh. Each
    /// is journalled with where the link stands.
    async fn react_to_faults(&self, arm: &dyn Arm) {
        let reaction = self.inner.pipeline.react_to_faults(|event| self.record(event)).await;
        for change in reaction.link {
            let health = arm.health();
            let state = match change {
                LinkChange::Lost => "lost",
                LinkChange::Recovered => "connected",
            };
            self.record(SafetyEvent::BusLink {
                state: state.to_owned(),
                port: self.port().unwrap_or_default(),
                attempts: health.link.attempts,
                time_lost_s: health.link.time_lost_at(now()).as_secs_f64(),
                last_error: health.last_error.clone().filter(|_| change == LinkChange::Lost),
            });
            match change {
                LinkChange::Lost => self.leave_hil(),
                LinkChange::Recovered => lock(&self.inner.shadow).rebase(self.inner.samples.borrow().twin_rad),
            }
        }
    }

    /// Leaves `hil` for `mirror` after the arm was lost, under the lock mode switches hold: at
    /// once when no switch is running, else as soon as it ends (a switch into `hil` that sees
    /// the stop this loss latched refuses, see [`HardwareBridge::set_mode`]). The mirror loop
    /// never waits for a switch, which may be reading the arm for a sync.
    fn leave_hil(&self) {
        if let Ok(_switching) = self.inner.switching.try_lock() {
            self.mirror_after_loss();
            return;
        }
        let bridge = self.clone();
        tokio::spawn(async move {
            let _switching = bridge.inner.switching.lock().await;
            bridge.mirror_after_loss();
        });
    }

    fn mirror_after_loss(&self) {
        if self.mode() == Mode::Hil {
            self.inner.pipeline.disarm_watchdog();
            self.inner.mode.send_replace(Mode::Mirror);
            tracing::warn!("the arm was lost in hil: it is in mirror now; SetMode(hil) once it is back");
        }
    }

    /// Runs the shadow on a reading: records drift, and holds the arm where it stands when a
    /// joint is blocked (the tick driver then ends its call stalled).
    async fn shade(&self, input: ShadowInput) -> [JointResidual; 6] {
        let (residuals, findings) = lock(&self.inner.shadow).observe(&input);
        let mut blocked = false;
        for finding in findings {
            match finding {
                Finding::Obstructed {
                    joint,
                    position_rad,
                    residual_rad,
                    load_percent,
                } => {
                    blocked = true;
                    self.record(SafetyEvent::joint_blocked(
                        joint,
                        position_rad,
                        residual_rad,
                        load_percent,
                    ));
                }
                Finding::Drift { joint, offset_rad } => self.record(SafetyEvent::calibration_drift(joint, offset_rad)),
            }
        }
        if blocked {
            if let Err(e) = self.inner.pipeline.hold(input.measured).await {
                tracing::error!(error = %e, "holding the blocked arm failed");
            }
            lock(&self.inner.shadow).rebase(input.measured);
            self.inner.obstructions.fetch_add(1, Ordering::Release);
        }
        residuals
    }

    /// Logs once when a joint's reading leaves the twin's range and when it comes back.
    fn flag_clamped(&self, clamped: &[bool; 6]) {
        let previous = self.inner.samples.borrow().clamped;
        for joint in Joint::ALL {
            let (was, is) = (previous[joint.index()], clamped[joint.index()]);
            if is && !was {
                tracing::warn!(
                    joint = joint.label(),
                    "the real arm is outside the twin's range; the twin mirrors it clamped"
                );
            } else if was && !is {
                tracing::info!(joint = joint.label(), "the real arm is back inside the twin's range");
            }
        }
    }
}

pub(super) async fn mirror_loop(bridge: HardwareBridge, arm: Arc<dyn Arm>, cancel: CancellationToken) {
    let mut pace = bridge.inner.config.mirror_rate_hz.map(|hz| {
        let mut interval = tokio::time::interval(Duration::from_secs_f64(1.0 / hz.max(1.0)));
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        interval
    });
    // After a read failed on a lost port, wait this long before the next, rather than spin.
    let retry_after = bridge.inner.config.control_period;
    let mut seq = 0;
    loop {
        let next = async {
            match pace.as_mut() {
                Some(interval) => {
                    interval.tick().await;
                }
                None => tokio::task::yield_now().await,
            }
        };
        tokio::select! {
            () = cancel.cancelled() => break,
            () = next => {}
        }
        seq += 1;
        // A read that failed on an open port has waited out its replies already; one that
        // failed at once on a lost port waits before asking again.
        if !bridge.mirror_once(arm.as_ref(), seq).await && !arm.health().port_open() {
            tokio::select! {
                () = cancel.cancelled() => break,
                () = tokio::time::sleep(retry_after) => {}
            }
        }
    }
    if let Err(e) = bridge.inner.pipeline.switch_torque_off().await {
        tracing::warn!(error = %e, "torque off at shutdown failed");
    }
}
