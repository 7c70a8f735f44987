//! Who tried what: authentication failures and control-lease changes, logged as they happen
//! and written to the live run's `events.jsonl` (kinds `auth` and `lease`).

use fakesim_episode::Engine;
use fakesim_episode::journal::Kind;
use serde::Serialize;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::mpsc;

/// Events waiting for the journal; beyond this (a flood of failed logins) they are only logged.
const JOURNAL_BACKLOG: usize = 1024;

/// One access event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AccessEvent {
    /// A call or a TLS handshake was refused for want of valid credentials.
    AuthFailed {
        /// The refusal's reason (`token_invalid`, `tls_required`, `tls_handshake`, ...).
        reason: &'static str,
        /// The client's address, when known.
        peer: Option<SocketAddr>,
        /// More about a failed handshake.
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// A client took the free control lease.
    LeaseAcquired {
        /// The holder name it gave.
        holder: String,
        /// Its time to live, milliseconds.
        ttl_ms: u32,
    },
    /// A client took the lease over from its holder.
    LeaseTakenOver {
        /// The new holder.
        holder: String,
        /// The holder it was taken from.
        previous_holder: String,
    },
    /// The holder gave the lease up.
    LeaseReleased {
        /// The holder.
        holder: String,
    },
    /// The lease was not renewed in time.
    LeaseExpired {
        /// The holder it expired on.
        holder: String,
    },
}

impl AccessEvent {
    /// The journal kind of the event.
    pub fn kind(&self) -> Kind {
        match self {
            AccessEvent::AuthFailed { .. } => Kind::Auth,
            _ => Kind::Lease,
        }
    }
}

/// Records access events: logs each at once and queues it for the run journal.
#[derive(Clone)]
pub struct Audit {
    journal: mpsc::Sender<AccessEvent>,
    unjournaled: Arc<AtomicU64>,
}

impl Audit {
    /// An audit and the receiving end its events are journaled from.
    pub fn channel() -> (Audit, mpsc::Receiver<AccessEvent>) {
        let (journal, events) = mpsc::channel(JOURNAL_BACKLOG);
        let audit = Audit {
            journal,
            unjournaled: Arc::new(AtomicU64::new(0)),
        };
        (audit, events)
    }

    /// Logs the event and queues it for the journal (dropped from the journal, counted and
    /// logged, when the backlog is full).
    pub fn record(&self, event: AccessEvent) {
        match &event {
            AccessEvent::AuthFailed { reason, peer, detail } => {
                tracing::warn!(reason, ?peer, detail = detail.as_deref(), "authentication failed");
            }
            AccessEvent::LeaseAcquired { holder, ttl_ms } => tracing::info!(holder, ttl_ms, "lease acquired"),
            AccessEvent::LeaseTakenOver {
                holder,
                previous_holder,
            } => tracing::warn!(holder, previous_holder, "lease taken over"),
            AccessEvent::LeaseReleased { holder } => tracing::info!(holder, "lease released"),
            AccessEvent::LeaseExpired { holder } => tracing::warn!(holder, "lease expired"),
        }
        if self.journal.try_send(event).is_err() {
            let total = self.unjournaled.fetch_add(1, Ordering::Relaxed) + 1;
            tracing::warn!(total, "access event not journaled (backlog full or journal gone)");
        }
    }
}

/// Writes every access event into the live run's journal, until the audit is dropped.
pub async fn journal_access_events(engine: Arc<Engine>, mut events: mpsc::Receiver<AccessEvent>) {
    while let Some(event) = events.recv().await {
        let fields = serde_json::json!({ event.kind().name(): event });
        if let Err(e) = engine.journal_event(event.kind(), fields).await {
            tracing::error!(error = %e, "cannot journal an access event");
        }
    }
}
