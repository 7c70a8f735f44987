//! The control period `Tick` runs at: set by a client for the session (`SetControlPeriod`) or
//! for one tick (`TickRequest.period_s`), kept by the twin's tick clock, reported by
//! `GetModelInfo` and written to the live episode's journal when it changes.

use crate::control::Need;
use crate::state::AppState;
use crate::status;
use fakesim_proto::v1;
use fakesim_twin::TickClock;
use fakesim_twin::clock::check_period;
use serde_json::json;
use tonic::Status;
use tonic::metadata::MetadataMap;

/// The journal kind of a change of the control period.
pub const PERIOD_EVENT: &str = "control_period";

impl AppState {
    /// The tick clock now: the control period in force.
    pub async fn control_period(&self) -> Result<TickClock, Status> {
        self.twin
            .with_sim(|sim| *sim.clock())
            .await
            .map_err(|e| status::from_twin(&e))
    }

    /// A tick's own period (s), checked as `SetControlPeriod` checks one (0 is refused: a
    /// tick's period is given or left out); `None` keeps the period in force.
    pub fn tick_period(&self, period_s: Option<f64>) -> Result<Option<f64>, Status> {
        if let Some(period_s) = period_s {
            check_period(period_s, self.model.timestep).map_err(|e| status::from_twin(&e))?;
        }
        Ok(period_s)
    }

    /// Sets the control period (s; 0 is the model's tick) for a call carrying `metadata`, a
    /// motion-class call for the lease; journals a change in a live episode.
    pub async fn set_control_period(
        &self,
        metadata: &MetadataMap,
        period_s: f64,
    ) -> Result<v1::SetControlPeriodResponse, Status> {
        let _drive = self.lock_drive().await;
        self.admit(metadata, Need::Motion)?;
        let (before, after) = self
            .twin
            .try_with_sim(move |sim| {
                let before = sim.clock().period_s();
                Ok((before, sim.set_control_period(period_s)?))
            })
            .await
            .map_err(|e| status::from_twin(&e))?;
        if after.period_s() != before {
            // Journaled before the drive lock goes, so no tick at the new period comes first.
            let fields = json!({
                "period_s": after.period_s(), "physics_steps_per_tick": after.steps_per_tick(), "was_s": before,
            });
            self.engine
                .journal_event(PERIOD_EVENT, fields)
                .await
                .map_err(|e| status::from_episode(&e))?;
            tracing::info!(period_s = after.period_s(), was_s = before, "control period set");
        }
        Ok(v1::SetControlPeriodResponse {
            period_s: after.period_s(),
            physics_steps_per_tick: after.steps_per_tick(),
        })
    }
}
