//! What an expired lease does to the arm.

use fakesim_bridge::hil::{HardwareBridge, Mode};
use std::sync::Arc;
use tokio::sync::{Mutex, watch};

/// Each time the lease of the bridge's arm expires (`expiries` changes) with the arm in `hil`,
/// holds the arm where it is (after any driving call in flight; not a ramped command, which
/// would carry a ramp's remaining offset on past the arm's pose), until the leases are gone.
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
        match bridge.hold(measured).await {
            Ok(()) => tracing::info!("lease expired: the arm holds where it is"),
            Err(e) => tracing::warn!(error = %e, "lease expired: cannot command the hold"),
        }
    }
}
