//! Starts the live view (`--live-view`) on the daemon's twin, bridge and engine.

use crate::wire::units::Units;
use anyhow::Context;
use fakesim_bridge::hil::HardwareBridge;
use fakesim_episode::Engine;
use fakesim_live_view::{LiveView, Sources, Target};
use fakesim_proto::v1::JointUnit;
use fakesim_twin::TwinHandle;
use std::sync::Arc;

/// Starts logging to `target`; joint values LeRobot also logs go out in its default unit
/// (degrees, the gripper 0..100) through the arm's calibration.
pub async fn start(
    target: &Target,
    twin: &TwinHandle,
    bridge: &HardwareBridge,
    engine: &Engine,
    units: &Arc<Units>,
) -> anyhow::Result<LiveView> {
    let units = units.clone();
    let sources = Sources {
        twin: twin.clone(),
        bridge: bridge.clone(),
        journal: engine.tap().subscribe(),
        to_lerobot: Arc::new(move |rad: &[f64; 6]| {
            let degrees = units.positions_in(rad, JointUnit::LerobotDegrees as i32);
            let degrees = degrees.unwrap_or_default();
            std::array::from_fn(|i| degrees.get(i).copied().unwrap_or(f64::NAN))
        }),
    };
    LiveView::start(target, sources)
        .await
        .with_context(|| format!("cannot start the live view ({target})"))
}
