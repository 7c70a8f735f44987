//! `--trace DIR`: each real arm's bus recorded into a trace file of its own (the format is
//! `fakesim_trace`'s), named by the arm's robot id (or its calibration file) and the UTC time
//! the daemon started it. The port task records goals and readings; this follows the mode.

use super::Follower;
use crate::config::Settings;
use anyhow::Context;
use fakesim_arm::Side;
use fakesim_bridge::hil::{HardwareBridge, Mode};
use fakesim_feetech_arm::FeetechArm;
use fakesim_trace::recorder::unix_now;
use fakesim_trace::{Header, Recorder};
use std::time::Instant;

/// Starts recording `arm`'s bus when the settings name a trace directory.
pub async fn start(settings: &Settings, follower: &Follower, arm: &FeetechArm) -> anyhow::Result<Option<Recorder>> {
    let Some(dir) = settings.trace_dir.clone() else {
        return Ok(None);
    };
    let from_calibration = || {
        let stem = follower.calibration.as_ref()?.file_stem()?;
        Some(stem.to_string_lossy().into_owned())
    };
    let stem = (follower.robot_id.clone())
        .or_else(from_calibration)
        .unwrap_or_else(|| follower.side.map_or("arm", Side::name).to_owned());
    let header = Header {
        arm: settings.arm.name().to_owned(),
        robot_id: follower.robot_id.clone(),
        side: follower.side.map(|side| side.name().to_owned()),
        started_unix_s: unix_now(),
    };
    let shown = dir.display().to_string();
    let recorder = tokio::task::spawn_blocking(move || Recorder::start_in(&dir, &stem, &header))
        .await
        .context("starting the trace panicked")?
        .with_context(|| format!("cannot record a trace in {shown} (--trace)"))?;
    arm.trace_to(recorder.clone()).await?;
    tracing::info!(trace = %recorder.path().display(), "recording the arm's bus");
    Ok(Some(recorder))
}

/// Records each mode the bridge takes, until the bridge is gone; then ends the recording.
pub fn follow_mode(recorder: Recorder, bridge: &HardwareBridge) {
    let mut modes = bridge.watch_mode();
    tokio::spawn(async move {
        loop {
            let mode = match *modes.borrow_and_update() {
                Mode::Sim => fakesim_trace::Mode::Sim,
                Mode::Mirror => fakesim_trace::Mode::Mirror,
                Mode::Hil => fakesim_trace::Mode::Hil,
            };
            recorder.set_mode(Instant::now(), mode);
            if modes.changed().await.is_err() {
                break;
            }
        }
        // The writer flushes as it goes; this only waits for its last records.
        let _ = tokio::task::spawn_blocking(move || recorder.finish()).await;
    });
}
