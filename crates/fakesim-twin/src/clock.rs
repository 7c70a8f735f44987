//! The tick clock: how much twin time one client tick advances. A period that is not a whole
//! number of physics steps runs the whole steps it owes and carries the fraction to the next
//! tick, so N ticks of a period advance N periods of twin time within one physics step, the
//! same way every time.

use crate::error::TwinError;
use crate::values::ValueError;

/// Longest control period a client may set (s).
pub const MAX_CONTROL_PERIOD_S: f64 = 1.0;

/// Owed fractions this close below a whole step count as that step: the sum of a period's
/// steps in `f64` may land a hair under the whole number it stands for.
const WHOLE_STEP_SLACK: f64 = 1e-9;

/// Checks a control period (s) against the physics timestep: finite, at least one step, at
/// most [`MAX_CONTROL_PERIOD_S`].
pub fn check_period(period_s: f64, timestep: f64) -> Result<(), TwinError> {
    if !period_s.is_finite() {
        return Err(TwinError::Value(ValueError::NonFinite {
            key: "period_s".to_owned(),
            value: period_s,
        }));
    }
    if period_s < timestep || period_s > MAX_CONTROL_PERIOD_S {
        return Err(TwinError::PeriodOutOfRange {
            period_s,
            lo: timestep,
            hi: MAX_CONTROL_PERIOD_S,
        });
    }
    Ok(())
}

/// The control period in force and the fraction of a physics step owed from earlier ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TickClock {
    timestep: f64,
    model_period: f64,
    period: f64,
    carry: f64,
}

impl TickClock {
    /// A clock at the model's tick of `substeps` physics steps of `timestep` seconds.
    pub fn new(timestep: f64, substeps: u32) -> Self {
        let model_period = timestep * f64::from(substeps);
        TickClock {
            timestep,
            model_period,
            period: model_period,
            carry: 0.0,
        }
    }

    /// The control period in force (s).
    pub fn period_s(&self) -> f64 {
        self.period
    }

    /// Physics steps one tick of the period in force advances on average.
    pub fn steps_per_tick(&self) -> f64 {
        self.period / self.timestep
    }

    /// Sets the period in force (s; 0 is back to the model's tick) and returns it. A period
    /// outside [`check_period`]'s bounds is refused and changes nothing.
    pub fn set_period(&mut self, period_s: f64) -> Result<f64, TwinError> {
        if period_s == 0.0 {
            self.period = self.model_period;
        } else {
            check_period(period_s, self.timestep)?;
            self.period = period_s;
        }
        Ok(self.period)
    }

    /// The whole physics steps one tick runs now, of the period in force or of `period_s`
    /// (checked by the caller), with the fraction owed carried on.
    pub fn take_tick(&mut self, period_s: Option<f64>) -> u32 {
        let owed = self.carry + period_s.unwrap_or(self.period) / self.timestep;
        let whole = (owed + WHOLE_STEP_SLACK).floor().max(0.0);
        self.carry = owed - whole;
        // At most MAX_CONTROL_PERIOD_S / timestep plus one step: far inside u32.
        whole as u32
    }

    /// The fraction of a physics step owed now (saved with a state, so a replay from it runs
    /// the same steps).
    pub fn carry(&self) -> f64 {
        self.carry
    }

    /// Owes `carry` of a physics step again (a restored state's).
    pub fn restore_carry(&mut self, carry: f64) {
        self.carry = carry;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn thirty_ticks_at_thirty_hertz_are_two_hundred_steps_of_five_milliseconds() {
        let mut clock = TickClock::new(0.005, 10);
        assert_eq!(clock.set_period(1.0 / 30.0).unwrap(), 1.0 / 30.0);
        let steps: Vec<u32> = (0..30).map(|_| clock.take_tick(None)).collect();
        assert_eq!(steps.iter().sum::<u32>(), 200);
        assert!(steps.iter().all(|&n| n == 6 || n == 7), "{steps:?}");
        assert!(clock.carry().abs() < 1e-6, "{}", clock.carry());
    }

    #[test]
    fn whole_periods_run_whole_steps_and_zero_is_the_model_tick() {
        let mut clock = TickClock::new(0.005, 10);
        assert_eq!(clock.take_tick(None), 10);
        clock.set_period(0.02).unwrap();
        assert_eq!(
            (0..100).map(|_| clock.take_tick(None)).collect::<Vec<_>>(),
            vec![4; 100]
        );
        assert_eq!(clock.take_tick(Some(0.05)), 10, "a tick's own period");
        assert_eq!(clock.set_period(0.0).unwrap(), 0.05);
        assert_eq!(clock.steps_per_tick(), 10.0);
    }

    #[test]
    fn periods_outside_one_step_to_one_second_are_refused_and_change_nothing() {
        let mut clock = TickClock::new(0.005, 10);
        for bad in [-0.01, 0.004, 1.001, f64::NAN, f64::INFINITY] {
            assert!(clock.set_period(bad).is_err(), "{bad}");
            assert_eq!(clock.period_s(), 0.05);
        }
        assert!(matches!(
            check_period(f64::NAN, 0.005),
            Err(TwinError::Value(ValueError::NonFinite { .. }))
        ));
        assert!(matches!(
            check_period(2.0, 0.005),
            Err(TwinError::PeriodOutOfRange { .. })
        ));
        assert!(check_period(0.005, 0.005).is_ok() && check_period(1.0, 0.005).is_ok());
    }
}
