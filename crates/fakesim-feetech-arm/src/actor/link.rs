//! The port's lifecycle in the port task: a lost port is reopened at an interval, its servos
//! are checked as at start-up, and only then does the arm count as connected again, with
//! torque off. The task keeps the facts (the link's state and counters); what a loss does is
//! decided by `fakesim_safety::bus_loss`.

use std::time::Duration;

use fakesim_arm::{Joint, LinkState};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

use super::Actor;

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Actor<T> {
    /// When the next attempt to reopen the port is due (`None`: connected, or never).
    pub(crate) fn reconnect_due(&self) -> Option<Instant> {
        match self.link.state {
            LinkState::Connected => None,
            _ => self.reconnection.as_ref()?.interval.map(|_| self.next_attempt),
        }
    }

    /// Marks the port lost now: torque is no longer known, nothing is sent until it is back.
    pub(crate) fn lose_link(&mut self) {
        if self.link.state != LinkState::Connected {
            return;
        }
        self.link.state = LinkState::Lost;
        self.link.losses += 1;
        self.link.attempts = 0;
        self.link.lost_since = Some(Instant::now().into_std());
        self.servos.iter_mut().for_each(|servo| servo.torque_enabled = None);
        self.ram.forget();
        self.next_attempt = Instant::now() + self.interval();
    }

    fn interval(&self) -> Duration {
        let interval = self.reconnection.as_ref().and_then(|r| r.interval);
        // Never due when there is no interval; a day stands in for never without overflowing.
        interval.unwrap_or(Duration::from_secs(86_400))
    }

    /// One attempt to bring the port back: open, prepare the servos, switch torque off on
    /// every one of them. A failed attempt leaves the link lost until the next.
    pub(crate) async fn try_reconnect(&mut self) {
        self.next_attempt = Instant::now() + self.interval();
        if self.reconnection.is_none() {
            return;
        }
        self.link.attempts += 1;
        self.link.state = LinkState::Reconnecting;
        self.publish();
        let Some(reconnection) = self.reconnection.as_mut() else {
            return;
        };
        let mut bus = match reconnection.reconnect.open().await {
            Ok(bus) => bus,
            Err(error) => return self.attempt_failed(format!("cannot reopen the port: {error}")),
        };
        self.link.state = LinkState::Verifying;
        self.publish();
        let Some(reconnection) = self.reconnection.as_mut() else {
            return;
        };
        if let Err(error) = reconnection.reconnect.prepare(&mut bus).await {
            return self.attempt_failed(format!("the servos on the reopened port were refused: {error}"));
        }
        bus.set_config(self.operating);
        self.bus = bus;
        if let Err(error) = self.switch_torque(&Joint::ALL, false).await {
            return self.attempt_failed(format!("torque off on the reopened port failed: {error}"));
        }
        for servo in &mut self.servos {
            servo.responding = true;
            servo.comm.consecutive_failures = 0;
        }
        self.ram.forget();
        self.link.state = LinkState::Connected;
        self.link.recoveries += 1;
        let now = Instant::now().into_std();
        let outage = self
            .link
            .lost_since
            .take()
            .map(|since| now.saturating_duration_since(since))
            .unwrap_or_default();
        self.link.time_lost += outage;
        tracing::info!(port = %self.config.port, attempts = self.link.attempts, ?outage, "serial port back; servos verified, torque off");
        self.link.attempts = 0;
        self.last_error = None;
        self.publish();
    }

    fn attempt_failed(&mut self, error: String) {
        tracing::warn!(port = %self.config.port, attempt = self.link.attempts, %error, "reconnecting the arm failed");
        self.link.state = LinkState::Lost;
        self.last_error = Some(error);
        self.publish();
    }
}
