//! Which calls need the control lease and when, and what an expired lease does to the arm.

use crate::state::AppState;
use crate::status;
use fakesim_bridge::hil::{HardwareBridge, Mode};
use std::sync::Arc;
use tokio::sync::{Mutex, watch};
use tonic::Status;
use tonic::metadata::MetadataMap;

/// What a call that may need the lease does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Moves the robot or changes the episode: needs the lease in mirror and hil, and in sim
    /// with `--lease-in-sim`.
    Motion,
    /// Switches the mode or resets the emergency stop: needs the lease whenever a real arm is
    /// attached, and in sim with `--lease-in-sim`.
    Control,
}

impl AppState {
    /// Whether a call of this kind needs the lease now.
    pub fn lease_required(&self, need: Need) -> bool {
        self.settings.lease_in_sim
            || match need {
                Need::Motion => self.bridge.mode() != Mode::Sim,
                Need::Control => self.bridge.port().is_some(),
            }
    }

    /// Admits a call of this kind carrying `metadata`, or refuses it for want of the lease.
    pub fn admit(&self, metadata: &MetadataMap, need: Need) -> Result<(), Status> {
        if !self.lease_required(need) {
            return Ok(());
        }
        self.leases.admit(metadata).map_err(|e| status::from_lease(&e))
    }
}

/// Each time a lease expires with the arm in `hil`, commands the arm to hold where it is
/// (after any driving call in flight), until the leases are gone.
pub async fn hold_on_expiry(mut expiries: watch::Receiver<u64>, bridge: HardwareBridge, drive: Arc<Mutex<()>>) {
    while expiries.changed().await.is_ok() {
        if bridge.mode() != Mode::Hil {
            continue;
        }
        let _drive = drive.lock().await;
        let measured = bridge.samples().borrow().real_rad;
        let Some(measured) = measured.filter(|_| bridge.mode() == Mode::Hil) else {
            continue;
        };
        match bridge.command(measured, measured).await {
            Ok(_) => tracing::info!("lease expired: the arm holds where it is"),
            Err(e) => tracing::warn!(error = %e, "lease expired: cannot command the hold"),
        }
    }
}
