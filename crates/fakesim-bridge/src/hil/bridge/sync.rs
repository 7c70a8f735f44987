//! Bringing the real arm and the twin together: the slow move of the arm to a pose, and the
//! twin put where the arm is.

use super::switch::largest_difference;
use super::{HardwareBridge, MAX_SYNC_DURATION, clamp_into};
use crate::hil::error::BridgeError;
use crate::hil::mode::Mode;
use fakesim_arm::Arm;
use fakesim_safety::Pace;
use fakesim_twin::JointValues;

/// Control periods the arm gets to settle on a sync target after the last goal.
const ARRIVAL_PERIODS: u32 = 50;

impl HardwareBridge {
    /// In `hil`, moves the real arm to `target` at the sync speed through the safety layers
    /// (the twin follows it); in other modes does nothing.
    pub async fn move_arm_to(&self, target: [f64; 6]) -> Result<(), BridgeError> {
        let Some(arm) = self.arm().cloned().filter(|_| self.mode() == Mode::Hil) else {
            return Ok(());
        };
        let _switching = self.inner.switching.lock().await;
        let real = self.read_arm(arm.as_ref()).await?.positions_rad();
        self.move_arm_slowly(arm.as_ref(), real, target, self.inner.config.sync_speed_rad_s)
            .await
    }

    pub(super) async fn put_twin_at(&self, joints: [f64; 6]) -> Result<(), BridgeError> {
        let clamped = clamp_into(&joints, &self.inner.twin_ranges);
        self.inner
            .twin
            .try_with_sim(move |sim| sim.set_joint_positions(&JointValues::Ordered(clamped.to_vec()), true))
            .await?;
        Ok(())
    }

    /// Moves the real arm from `from` to `to` at the sync speed, one control tick at a time.
    pub(super) async fn move_arm_slowly(
        &self,
        arm: &dyn Arm,
        from: [f64; 6],
        to: [f64; 6],
        speed_rad_s: f64,
    ) -> Result<(), BridgeError> {
        if !(speed_rad_s.is_finite() && speed_rad_s > 0.0) {
            return Err(BridgeError::InvalidArgument(format!(
                "sync_max_speed_rad_s={speed_rad_s} must be finite and above 0 rad/s"
            )));
        }
        let (joint, distance) = largest_difference(&from, &to);
        let duration_s = distance / speed_rad_s;
        let max_s = MAX_SYNC_DURATION.as_secs_f64();
        if duration_s > max_s {
            return Err(BridgeError::InvalidArgument(format!(
                "sync_max_speed_rad_s={speed_rad_s} would take {duration_s:.1} s to move {} by {distance:.3} rad; \
                 a sync takes at most {max_s} s, so ask for at least {:.3} rad/s",
                joint.label(),
                distance / max_s
            )));
        }
        self.enable_torque().await?;
        let period = self.inner.config.control_period;
        let step = speed_rad_s * period.as_secs_f64();
        let ticks = (distance / step).ceil().max(1.0) as u32;
        let mut deadline = tokio::time::Instant::now();
        let mut measured = from;
        for k in 1..=ticks {
            let fraction = f64::from(k) / f64::from(ticks);
            let goal: [f64; 6] = std::array::from_fn(|i| from[i] + (to[i] - from[i]) * fraction);
            self.send(goal, measured, Pace::Direct).await?;
            deadline += period;
            tokio::time::sleep_until(deadline).await;
            measured = self.read_arm(arm).await?.positions_rad();
        }
        self.await_arrival(arm, to, measured).await?;
        self.inner.pipeline.ramp_from(to);
        Ok(())
    }

    /// Waits (a bounded number of control periods) for the arm to settle on `target`; refuses
    /// when it stays farther than the disagreement threshold.
    async fn await_arrival(&self, arm: &dyn Arm, target: [f64; 6], mut measured: [f64; 6]) -> Result<(), BridgeError> {
        let threshold_rad = self.inner.config.disagree_threshold_rad;
        let period = self.inner.config.control_period;
        for _ in 0..ARRIVAL_PERIODS {
            if largest_difference(&measured, &target).1 <= threshold_rad {
                return Ok(());
            }
            tokio::time::sleep(period).await;
            measured = self.read_arm(arm).await?.positions_rad();
        }
        let (joint, error_rad) = largest_difference(&measured, &target);
        if error_rad <= threshold_rad {
            return Ok(());
        }
        Err(BridgeError::NotArrived {
            joint: joint.label(),
            error_rad,
            threshold_rad,
        })
    }
}
