//! Starts the live view (`--live-view`) on the daemon's twin, its arms and the engine.

use super::ArmUnit;
use anyhow::Context;
use fakesim_episode::Engine;
use fakesim_live_view::{ArmSource, LiveView, Sources, Target};
use fakesim_proto::v1::JointUnit;
use fakesim_twin::TwinHandle;
use std::sync::Arc;

/// Starts logging to `target`; joint values LeRobot also logs go out in its default unit
/// (degrees, the gripper 0..100) through each arm's calibration.
pub async fn start(target: &Target, twin: &TwinHandle, arms: &[ArmUnit], engine: &Engine) -> anyhow::Result<LiveView> {
    let arms = (arms.iter())
        .map(|arm| {
            let units = arm.units.clone();
            ArmSource {
                bridge: arm.bridge.clone(),
                to_lerobot: Arc::new(move |rad: &[f64; 6]| {
                    let degrees = units.positions_in(rad, JointUnit::LerobotDegrees as i32);
                    let degrees = degrees.unwrap_or_default();
                    std::array::from_fn(|i| degrees.get(i).copied().unwrap_or(f64::NAN))
                }),
            }
        })
        .collect();
    let sources = Sources {
        twin: twin.clone(),
        arms,
        journal: engine.tap().subscribe(),
    };
    LiveView::start(target, sources)
        .await
        .with_context(|| format!("cannot start the live view ({target})"))
}
