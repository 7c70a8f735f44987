//! The control period `Tick` runs at: set by a client for the session (`SetControlPeriod`, a
//! motion of the controller) or for one tick (`TickRequest.period_s`), kept by the twin's tick
//! clock, reported by `GetModelInfo` and written to the live episode's journal when it changes.

use crate::state::AppState;
use crate::wire::status;
use fakesim_twin::TickClock;
use fakesim_twin::clock::check_period;
use tonic::Status;

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
}
