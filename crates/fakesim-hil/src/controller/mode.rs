//! `SetMode` on every arm: the arms of a pair always share one mode.

use crate::state::AppState;
use fakesim_bridge::hil::{BridgeError, Mode, ModeSwitch, SyncOption};
use std::time::Duration;

impl AppState {
    /// Switches every arm to `mode`, in order. When one arm refuses, the arms already switched
    /// go back to the mode they had, so the pair never runs in two modes; the refusal is the
    /// answer. A pair's switch reports the largest joint error and the longest sync.
    pub(super) async fn set_mode(
        &self,
        mode: Mode,
        sync: SyncOption,
        sync_speed_rad_s: Option<f64>,
    ) -> Result<ModeSwitch, BridgeError> {
        let mut done: Vec<ModeSwitch> = Vec::with_capacity(self.arms.len());
        for arm in self.arms.iter() {
            match arm.bridge.set_mode(mode, sync, sync_speed_rad_s).await {
                Ok(switch) => done.push(switch),
                Err(refusal) => {
                    for (arm, switch) in self.arms.iter().zip(&done) {
                        if let Err(e) = arm.bridge.set_mode(switch.previous, SyncOption::None, None).await {
                            tracing::error!(arm = ?arm.side, error = %e, "cannot put an arm back in its mode");
                        }
                    }
                    return Err(refusal);
                }
            }
        }
        Ok(ModeSwitch {
            previous: done.first().map_or(mode, |switch| switch.previous),
            max_joint_error_rad: done.iter().map(|s| s.max_joint_error_rad).fold(0.0, f64::max),
            sync_duration: done.iter().map(|s| s.sync_duration).max().unwrap_or(Duration::ZERO),
        })
    }
}
