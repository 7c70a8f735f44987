//! The control lease: one client at a time may move the arm, switch the mode or reset the
//! emergency stop. A lease is taken with a holder name and a time to live, renewed before it
//! runs out, released, or taken over explicitly; one that is not renewed expires (and an arm in
//! `hil` then holds where it is). Reads, streams and the emergency stop never need it.

use crate::access::audit::{AccessEvent, Audit};
use fakesim_episode::names::bounded_quote;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Duration;
use subtle::ConstantTimeEq;
use tokio::sync::watch;
use tokio::time::Instant;
use tonic::metadata::MetadataMap;

/// gRPC metadata key a call carries its lease id in.
pub const LEASE_HEADER: &str = "x-fakesim-lease";
/// Time to live when the request gives 0, milliseconds.
pub const DEFAULT_TTL_MS: u32 = 5_000;
/// Shortest time to live accepted, milliseconds.
pub const MIN_TTL_MS: u32 = 100;
/// Longest time to live accepted, milliseconds.
pub const MAX_TTL_MS: u32 = 60_000;
/// Longest holder name, characters.
pub const MAX_HOLDER_CHARS: usize = 64;

/// Why a lease call or a call that needs the lease was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    /// The call needs the lease and carries none while nobody holds it.
    #[error(
        "this call needs the control lease: take it with HardwareService/AcquireLease and send its \
         lease_id as gRPC metadata `{LEASE_HEADER}`"
    )]
    Required,
    /// Someone else holds the lease.
    #[error(
        "the control lease is held by {holder} (expires in {expires_in_ms} ms unless renewed); wait for it, \
         or take it over with AcquireLease takeover=true"
    )]
    Held {
        /// The holder's name, quoted.
        holder: String,
        /// Time until it expires unless renewed, milliseconds.
        expires_in_ms: u64,
    },
    /// The lease the call carries is no longer held and nobody holds another.
    #[error("the lease this call carries is no longer held (it expired or was released); acquire a new one")]
    Expired,
    /// The holder name is empty, too long or has control characters.
    #[error("holder {quoted} must be 1 to {MAX_HOLDER_CHARS} printable characters")]
    BadHolder {
        /// The name given, bounded and escaped.
        quoted: String,
    },
    /// The time to live is outside the accepted range.
    #[error("ttl_ms={ttl_ms} outside [{MIN_TTL_MS}, {MAX_TTL_MS}] ms (0 for the default {DEFAULT_TTL_MS} ms)")]
    BadTtl {
        /// The value given.
        ttl_ms: u32,
    },
    /// The system's random source failed while making a lease id.
    #[error("cannot make a lease id: {0}")]
    NoRandomness(String),
}

impl LeaseError {
    /// The `ErrorInfo` reason of the refusal.
    pub fn reason(&self) -> &'static str {
        match self {
            LeaseError::Required => "lease_required",
            LeaseError::Held { .. } => "lease_held",
            LeaseError::Expired => "lease_expired",
            LeaseError::BadHolder { .. } | LeaseError::BadTtl { .. } => "invalid_argument",
            LeaseError::NoRandomness(_) => "internal",
        }
    }
}

/// A lease as granted or renewed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    /// The secret id calls carry.
    pub lease_id: String,
    /// The holder name.
    pub holder: String,
    /// Time to live, milliseconds.
    pub ttl_ms: u32,
    /// The holder a takeover replaced.
    pub previous_holder: Option<String>,
}

/// The holder now, for the hardware status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HolderNow {
    /// The holder name.
    pub holder: String,
    /// Time until expiry unless renewed.
    pub expires_in: Duration,
}

struct Held {
    id: String,
    holder: String,
    ttl_ms: u32,
    expires: Instant,
}

impl Held {
    fn granted(&self, previous_holder: Option<String>) -> Granted {
        Granted {
            lease_id: self.id.clone(),
            holder: self.holder.clone(),
            ttl_ms: self.ttl_ms,
            previous_holder,
        }
    }

    fn is(&self, id: &str) -> bool {
        self.id.as_bytes().ct_eq(id.as_bytes()).into()
    }

    fn held_error(&self, now: Instant) -> LeaseError {
        let left = self.expires.saturating_duration_since(now);
        LeaseError::Held {
            holder: bounded_quote(&self.holder),
            expires_in_ms: u64::try_from(left.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

struct Inner {
    held: Mutex<Option<Held>>,
    /// Bumped on every change of the lease, so the expiry task re-reads the deadline.
    changed: watch::Sender<u64>,
    /// Counts expiries, for whoever holds the arm on expiry.
    expired: watch::Sender<u64>,
    audit: Audit,
}

/// The daemon's control lease; cheap to clone.
#[derive(Clone)]
pub struct Leases {
    inner: Arc<Inner>,
}

impl Leases {
    /// No lease held; starts the task that expires leases on time (it ends with the last clone).
    pub fn start(audit: Audit) -> Self {
        let inner = Arc::new(Inner {
            held: Mutex::new(None),
            changed: watch::channel(0).0,
            expired: watch::channel(0).0,
            audit,
        });
        tokio::spawn(expire_on_time(Arc::downgrade(&inner), inner.changed.subscribe()));
        Leases { inner }
    }

    /// Takes the lease for `holder` for `ttl_ms` (0: the default). Refused while another holds
    /// it unless `takeover` is set.
    pub fn acquire(&self, holder: &str, ttl_ms: u32, takeover: bool) -> Result<Granted, LeaseError> {
        check_holder(holder)?;
        let ttl_ms = match ttl_ms {
            0 => DEFAULT_TTL_MS,
            t if (MIN_TTL_MS..=MAX_TTL_MS).contains(&t) => t,
            t => return Err(LeaseError::BadTtl { ttl_ms: t }),
        };
        let id = new_lease_id()?;
        let now = Instant::now();
        let mut held = self.held();
        let previous = match held.take() {
            Some(current) if !takeover => {
                let error = current.held_error(now);
                *held = Some(current);
                return Err(error);
            }
            previous => previous.map(|p| p.holder),
        };
        let lease = Held {
            id,
            holder: holder.to_owned(),
            ttl_ms,
            expires: now + Duration::from_millis(u64::from(ttl_ms)),
        };
        let granted = lease.granted(previous.clone());
        *held = Some(lease);
        drop(held);
        self.inner.audit.record(match previous {
            Some(previous_holder) => AccessEvent::LeaseTakenOver {
                holder: holder.to_owned(),
                previous_holder,
            },
            None => AccessEvent::LeaseAcquired {
                holder: holder.to_owned(),
                ttl_ms,
            },
        });
        self.inner.changed.send_modify(|n| *n += 1);
        Ok(granted)
    }

    /// Extends the lease with id `lease_id` by its time to live from now.
    pub fn renew(&self, lease_id: &str) -> Result<Granted, LeaseError> {
        let mut held = self.held();
        let lease = own_lease(&mut held, lease_id)?;
        lease.expires = Instant::now() + Duration::from_millis(u64::from(lease.ttl_ms));
        let granted = lease.granted(None);
        drop(held);
        tracing::debug!(holder = granted.holder, "lease renewed");
        self.inner.changed.send_modify(|n| *n += 1);
        Ok(granted)
    }

    /// Gives up the lease with id `lease_id`.
    pub fn release(&self, lease_id: &str) -> Result<(), LeaseError> {
        let mut held = self.held();
        own_lease(&mut held, lease_id)?;
        let holder = held.take().map(|l| l.holder).unwrap_or_default();
        drop(held);
        self.inner.audit.record(AccessEvent::LeaseReleased { holder });
        self.inner.changed.send_modify(|n| *n += 1);
        Ok(())
    }

    /// Admits a call carrying `metadata` that needs the lease.
    pub fn admit(&self, metadata: &MetadataMap) -> Result<(), LeaseError> {
        let presented = metadata
            .get(LEASE_HEADER)
            .map(|value| value.to_str().unwrap_or_default());
        let mut held = self.held();
        match presented {
            None => match &*held {
                Some(lease) => Err(lease.held_error(Instant::now())),
                None => Err(LeaseError::Required),
            },
            Some(id) => own_lease(&mut held, id).map(drop),
        }
    }

    /// Who holds the lease now, if anyone.
    pub fn holder(&self) -> Option<HolderNow> {
        let now = Instant::now();
        self.held().as_ref().map(|lease| HolderNow {
            holder: lease.holder.clone(),
            expires_in: lease.expires.saturating_duration_since(now),
        })
    }

    /// Changes each time a lease expires.
    pub fn expiries(&self) -> watch::Receiver<u64> {
        self.inner.expired.subscribe()
    }

    /// The lease state, with a lease past its deadline expired first.
    fn held(&self) -> MutexGuard<'_, Option<Held>> {
        let mut held = self.inner.held.lock().unwrap_or_else(PoisonError::into_inner);
        if held.as_ref().is_some_and(|lease| lease.expires <= Instant::now())
            && let Some(lease) = held.take()
        {
            self.inner
                .audit
                .record(AccessEvent::LeaseExpired { holder: lease.holder });
            self.inner.expired.send_modify(|n| *n += 1);
        }
        held
    }
}

/// The lease with id `id`, or why the caller does not hold it.
fn own_lease<'a>(held: &'a mut Option<Held>, id: &str) -> Result<&'a mut Held, LeaseError> {
    match held {
        Some(lease) => {
            if lease.is(id) {
                Ok(lease)
            } else {
                Err(lease.held_error(Instant::now()))
            }
        }
        None => Err(LeaseError::Expired),
    }
}

fn check_holder(holder: &str) -> Result<(), LeaseError> {
    let count = holder.chars().take(MAX_HOLDER_CHARS + 1).count();
    if (1..=MAX_HOLDER_CHARS).contains(&count) && !holder.chars().any(char::is_control) {
        Ok(())
    } else {
        Err(LeaseError::BadHolder {
            quoted: bounded_quote(holder),
        })
    }
}

/// 128 random bits as 32 hex digits.
fn new_lease_id() -> Result<String, LeaseError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| LeaseError::NoRandomness(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Expires the lease at its deadline even when no call looks at it, until the leases are gone.
async fn expire_on_time(inner: Weak<Inner>, mut changed: watch::Receiver<u64>) {
    loop {
        changed.mark_unchanged();
        let deadline = {
            let Some(inner) = inner.upgrade() else { return };
            Leases { inner }.held().as_ref().map(|lease| lease.expires)
        };
        let expired = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = expired => {}
            result = changed.changed() => if result.is_err() { return },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use tokio::sync::mpsc;

    fn leases() -> (Leases, mpsc::Receiver<AccessEvent>) {
        let (audit, events) = Audit::channel();
        (Leases::start(audit), events)
    }

    fn carrying(lease_id: &str) -> MetadataMap {
        let mut metadata = MetadataMap::new();
        metadata.insert(LEASE_HEADER, lease_id.parse().unwrap());
        metadata
    }

    #[tokio::test(start_paused = true)]
    async fn one_holder_at_a_time_and_takeover_is_explicit() {
        let (leases, mut events) = leases();
        assert_eq!(leases.admit(&MetadataMap::new()), Err(LeaseError::Required));
        let first = leases.acquire("policy-gpu", 1000, false).unwrap();
        assert_eq!(first.lease_id.len(), 32);
        assert_eq!(leases.admit(&carrying(&first.lease_id)), Ok(()));
        let refused = leases.acquire("laptop", 1000, false).unwrap_err();
        assert!(refused.to_string().contains("\"policy-gpu\""), "{refused}");
        assert_eq!(refused.reason(), "lease_held");
        assert_eq!(leases.admit(&MetadataMap::new()).unwrap_err().reason(), "lease_held");
        assert_eq!(leases.admit(&carrying("guess")).unwrap_err().reason(), "lease_held");

        let second = leases.acquire("laptop", 1000, true).unwrap();
        assert_eq!(second.previous_holder.as_deref(), Some("policy-gpu"));
        assert!(
            leases.admit(&carrying(&first.lease_id)).is_err(),
            "the old id no longer works"
        );
        assert_eq!(leases.renew(&first.lease_id).unwrap_err().reason(), "lease_held");
        assert_eq!(leases.holder().unwrap().holder, "laptop");
        leases.release(&second.lease_id).unwrap();
        assert_eq!(leases.holder(), None);
        assert_eq!(leases.admit(&carrying(&second.lease_id)), Err(LeaseError::Expired));

        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            seen.push(event);
        }
        assert_eq!(
            seen,
            [
                AccessEvent::LeaseAcquired {
                    holder: "policy-gpu".into(),
                    ttl_ms: 1000
                },
                AccessEvent::LeaseTakenOver {
                    holder: "laptop".into(),
                    previous_holder: "policy-gpu".into()
                },
                AccessEvent::LeaseReleased {
                    holder: "laptop".into()
                },
            ]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn renewal_extends_and_silence_expires() {
        let (leases, mut events) = leases();
        let mut expiries = leases.expiries();
        let lease = leases.acquire("teleop", 300, false).unwrap();
        tokio::time::advance(Duration::from_millis(200)).await;
        leases.renew(&lease.lease_id).unwrap();
        let renewed = Instant::now();
        tokio::time::advance(Duration::from_millis(200)).await;
        assert_eq!(
            leases.admit(&carrying(&lease.lease_id)),
            Ok(()),
            "renewed 200 ms ago, ttl 300"
        );
        // Nobody asks: the expiry task expires it at its deadline.
        expiries.changed().await.unwrap();
        assert_eq!(renewed.elapsed(), Duration::from_millis(300));
        assert_eq!(leases.holder(), None);
        assert_eq!(leases.admit(&carrying(&lease.lease_id)), Err(LeaseError::Expired));
        let last = std::iter::from_fn(|| events.try_recv().ok()).last();
        assert_eq!(
            last,
            Some(AccessEvent::LeaseExpired {
                holder: "teleop".into()
            })
        );
    }

    #[tokio::test]
    async fn bad_holders_and_ttls_are_refused_with_bounded_quotes() {
        let (leases, _events) = leases();
        for holder in [String::new(), "a\nb".into(), "x".repeat(1 << 20)] {
            let error = leases.acquire(&holder, 0, false).unwrap_err();
            assert_eq!(error.reason(), "invalid_argument");
            assert!(error.to_string().len() < 200, "{error}");
        }
        for ttl in [1, MAX_TTL_MS + 1] {
            assert_eq!(leases.acquire("a", ttl, false), Err(LeaseError::BadTtl { ttl_ms: ttl }));
        }
        assert_eq!(leases.acquire("a", 0, false).unwrap().ttl_ms, DEFAULT_TTL_MS);
    }
}
