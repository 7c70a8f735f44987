//! The latched emergency stop.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::{SafetyError, SafetyEvent};

/// A latched emergency stop shared by everyone who clones it (the RPC handler and the
/// control loop). Once tripped it stays latched until [`EstopLatch::reset`]; while latched
/// [`EstopLatch::check`] refuses every motion. Switching torque off on a trip is the caller's
/// job.
#[derive(Debug, Clone, Default)]
pub struct EstopLatch {
    latched: Arc<Mutex<Option<(String, LatchedBy)>>>,
}

/// Who latched the stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatchedBy {
    /// A client or an operator (`EmergencyStop`): it stops the twin's motion too.
    Client,
    /// The real arm's faults (a lost bus, a lost or reset servo): it stops the real arm only;
    /// the twin alone keeps running.
    Arm,
}

impl EstopLatch {
    /// A released latch.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Option<(String, LatchedBy)>> {
        self.latched.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Latches for a client with a reason (a second trip keeps the first reason and who
    /// latched it) and returns the event.
    pub fn trip(&self, reason: impl Into<String>) -> SafetyEvent {
        self.trip_by(reason, LatchedBy::Client)
    }

    /// Latches for `by` with a reason; see [`EstopLatch::trip`].
    pub fn trip_by(&self, reason: impl Into<String>, by: LatchedBy) -> SafetyEvent {
        let reason = reason.into();
        let mut latched = self.lock();
        if latched.is_none() {
            tracing::warn!(%reason, ?by, "emergency stop latched");
            *latched = Some((reason.clone(), by));
        }
        SafetyEvent::EstopLatched { reason }
    }

    /// Releases the latch; the event names what it was latched for (`None` if it was not).
    pub fn reset(&self) -> Option<SafetyEvent> {
        let (was, _) = self.lock().take()?;
        tracing::info!(%was, "emergency stop reset");
        Some(SafetyEvent::EstopReset { was })
    }

    /// Who latched it (`None`: not latched).
    pub fn latched_by(&self) -> Option<LatchedBy> {
        self.lock().as_ref().map(|(_, by)| *by)
    }

    /// Whether it is latched.
    pub fn is_latched(&self) -> bool {
        self.lock().is_some()
    }

    /// Why it is latched.
    pub fn reason(&self) -> Option<String> {
        self.lock().as_ref().map(|(reason, _)| reason.clone())
    }

    /// Refuses any motion while latched.
    pub fn check(&self) -> Result<(), SafetyError> {
        match self.reason() {
            Some(reason) => Err(SafetyError::EstopLatched { reason }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latches_until_an_explicit_reset_and_every_clone_sees_it() {
        let latch = EstopLatch::new();
        let rpc = latch.clone();
        assert!(latch.check().is_ok());
        assert_eq!(
            rpc.trip("operator pressed stop"),
            SafetyEvent::EstopLatched {
                reason: "operator pressed stop".into()
            }
        );
        assert!(latch.is_latched());
        let err = latch.check().unwrap_err();
        assert_eq!(
            err.to_string(),
            "emergency stop latched (operator pressed stop); motion refused until an explicit reset"
        );
        assert_eq!(
            err.event(),
            SafetyEvent::RefusedWhileLatched {
                reason: "operator pressed stop".into()
            }
        );
        // A second trip keeps the first reason; checking again does not clear it.
        rpc.trip("bus lost");
        assert!(latch.check().is_err());
        assert_eq!(latch.reason().as_deref(), Some("operator pressed stop"));
        assert_eq!(
            latch.reset(),
            Some(SafetyEvent::EstopReset {
                was: "operator pressed stop".into()
            })
        );
        assert!(rpc.check().is_ok());
        assert_eq!(latch.reset(), None);
    }
}
