//! The twin as the last layer: each command for the real arm runs first on a scratch copy of
//! the twin, from the state the twin mirrors (the arm as measured), holding its targets for
//! as long as the servos need to reach them (counted at [`ASSUMED_SPEED_RAD_S`]) plus a short
//! horizon; a contact with the table, the base, the arm itself or an object (beyond a small
//! tolerance), or a joint driven past its range, refuses the command before it moves.

use fakesim_arm::BoxFuture;
use fakesim_safety::{CommandPreview, SafetyError};
use fakesim_twin::preview::{MAX_PREVIEW_STEPS, PreviewLimits, PreviewRequest};
use fakesim_twin::{JointValues, ModelInfo, TwinHandle};
use std::time::Duration;

/// Control ticks a command is previewed for after the servos would have reached its targets.
pub const DEFAULT_PREVIEW_HORIZON_TICKS: u32 = 4;

/// The joint speed the preview's length is counted at (rad/s): slower than the servos run, so
/// a far target is previewed all the way.
pub const ASSUMED_SPEED_RAD_S: f64 = 2.0;

/// Most ticks one gate preview runs past its command's, at most what a preview may run
/// ([`MAX_PREVIEW_STEPS`]; fewer ticks when a dynamics profile's finer step puts more steps in one).
const MAX_GATE_TICKS: u32 = 150;

/// Penetration a previewed contact may reach before it refuses the command (m): fingertips
/// brushing the table top while grasping a cube do not count.
pub const PREVIEW_CONTACT_TOLERANCE_M: f64 = 0.002;

/// Violations a refusal names; the rest are counted.
const NAMED_VIOLATIONS: usize = 3;

/// Previews each command on the twin's scratch copy.
pub struct TwinPreviewGate {
    twin: TwinHandle,
    horizon_ticks: u32,
    tick: Duration,
    /// Most ticks a preview runs after its command's.
    max_ticks: u32,
}

impl TwinPreviewGate {
    /// A gate on `twin`, whose model (its control tick and physics steps per tick) is `model`,
    /// looking `horizon_ticks` ticks past the time each command needs.
    pub fn new(twin: TwinHandle, horizon_ticks: u32, model: &ModelInfo) -> Self {
        let steps_per_tick = model.substeps_per_tick.max(1);
        TwinPreviewGate {
            twin,
            horizon_ticks,
            tick: Duration::from_secs_f64(1.0 / model.control_rate_hz()),
            max_ticks: MAX_GATE_TICKS.min((MAX_PREVIEW_STEPS / steps_per_tick).saturating_sub(1)),
        }
    }

    /// Ticks the servos need from `measured` to `targets` at the assumed speed, plus the
    /// horizon.
    fn ticks_for(&self, targets: &[f64; 6], measured: &[f64; 6]) -> u32 {
        let farthest = targets
            .iter()
            .zip(measured)
            .map(|(t, m)| (t - m).abs())
            .fold(0.0, f64::max);
        let travel = (farthest / ASSUMED_SPEED_RAD_S / self.tick.as_secs_f64().max(1e-3)).ceil();
        // Finite and non-negative: targets passed the range layer, and the cast saturates.
        (travel as u32).saturating_add(self.horizon_ticks).min(self.max_ticks)
    }
}

impl CommandPreview for TwinPreviewGate {
    fn check(&self, targets: [f64; 6], measured: [f64; 6]) -> BoxFuture<'_, Result<(), SafetyError>> {
        Box::pin(async move {
            let horizon_ticks = self.ticks_for(&targets, &measured);
            let request = PreviewRequest {
                limits: PreviewLimits {
                    contact_tolerance_m: PREVIEW_CONTACT_TOLERANCE_M,
                    ..PreviewLimits::default()
                },
                ..PreviewRequest::new(vec![JointValues::Ordered(targets.to_vec())], horizon_ticks)
            };
            let report = self
                .twin
                .preview(request)
                .await
                .map_err(|e| SafetyError::PreviewFailed(e.to_string()))?;
            if report.is_safe() {
                return Ok(());
            }
            let mut violations: Vec<String> = report
                .violations
                .iter()
                .take(NAMED_VIOLATIONS)
                .map(ToString::to_string)
                .collect();
            if let Some(more) = report.violations.len().checked_sub(NAMED_VIOLATIONS).filter(|n| *n > 0) {
                violations.push(format!("{more} more"));
            }
            Err(SafetyError::PreviewRefused {
                violations: violations.join("; "),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use fakesim_twin::{ArmType, Scene, TwinConfig};

    #[tokio::test(flavor = "multi_thread")]
    async fn a_far_command_with_the_longest_horizon_is_previewed_at_a_finer_step_too() {
        for step in [None, Some(0.0025)] {
            let twin = TwinHandle::spawn(TwinConfig {
                scene: Scene::builtin(ArmType::So101, false),
                physics_step_s: step,
                ..TwinConfig::default()
            })
            .unwrap();
            let model = twin.with_sim(|sim| sim.model_info()).await.unwrap();
            let gate = TwinPreviewGate::new(twin.clone(), 50, &model);
            // The wrist turned through 5 rad: 50 ticks of travel at the assumed speed, then the
            // horizon; at 2.5 ms the preview's 2000 steps hold 99 ticks after the command's.
            let (measured, targets) = ([0.3, -0.3, 0.3, 0.2, -2.5, 0.5], [0.3, -0.3, 0.3, 0.2, 2.5, 0.5]);
            let ticks = gate.ticks_for(&targets, &measured);
            match step {
                Some(_) => assert_eq!(ticks, 99),
                None => assert!((100..=101).contains(&ticks), "{ticks}"),
            }
            gate.check(targets, measured).await.unwrap();
            twin.shutdown();
        }
    }
}
