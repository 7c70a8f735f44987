//! The control lease: one client at a time may move an arm, switch the mode or reset the
//! emergency stop. A lease is taken with a holder name and a time to live, renewed before it
//! runs out, released, or taken over explicitly; one that is not renewed expires (and an arm in
//! `hil` then holds where it is). Reads, streams and the emergency stop never need it.
//!
//! Each arm has its lease: one lease (one id) may cover every arm, or a pair's arms may be held
//! by two clients, one each. A call needs the lease of every arm it moves.

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

#[derive(Clone)]
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
    /// Each arm's lease, if held (a lease covering several arms is in each of their places).
    held: Mutex<Vec<Option<Held>>>,
    /// Bumped on every change of the lease, so the expiry task re-reads the deadline.
    changed: watch::Sender<u64>,
    /// Counts the expiries of each arm's lease, for whoever holds the arm on expiry.
    expired: Vec<watch::Sender<u64>>,
    audit: Audit,
}

/// The daemon's control lease; cheap to clone.
#[derive(Clone)]
pub struct Leases {
    inner: Arc<Inner>,
}

impl Leases {
    /// The leases of `arms` arms, none held; starts the task that expires leases on time (it
    /// ends with the last clone).
    pub fn start(audit: Audit, arms: usize) -> Self {
        let inner = Arc::new(Inner {
            held: Mutex::new(vec![None; arms.max(1)]),
            changed: watch::channel(0).0,
            expired: (0..arms.max(1)).map(|_| watch::channel(0).0).collect(),
            audit,
        });
        tokio::spawn(expire_on_time(Arc::downgrade(&inner), inner.changed.subscribe()));
        Leases { inner }
    }

    /// Takes the lease of every arm for `holder` for `ttl_ms` (0: the default). Refused while
    /// another holds one of them unless `takeover` is set.
    pub fn acquire(&self, holder: &str, ttl_ms: u32, takeover: bool) -> Result<Granted, LeaseError> {
        let every: Vec<usize> = (0..self.held().len()).collect();
        self.acquire_arms(holder, ttl_ms, takeover, &every)
    }

    /// Takes the lease of the arms at `arms` (indices into the daemon's arms), as
    /// [`Leases::acquire`] does for every arm.
    pub fn acquire_arms(
        &self,
        holder: &str,
        ttl_ms: u32,
        takeover: bool,
        arms: &[usize],
    ) -> Result<Granted, LeaseError> {
        check_holder(holder)?;
        let ttl_ms = match ttl_ms {
            0 => DEFAULT_TTL_MS,
            t if (MIN_TTL_MS..=MAX_TTL_MS).contains(&t) => t,
            t => return Err(LeaseError::BadTtl { ttl_ms: t }),
        };
        let id = new_lease_id()?;
        let now = Instant::now();
        let mut held = self.held();
        let current = arms.iter().filter_map(|&arm| held.get(arm).and_then(Option::as_ref));
        let previous = match current.clone().next() {
            Some(current) if !takeover => return Err(current.held_error(now)),
            first => first.map(|p| p.holder.clone()),
        };
        let lease = Held {
            id,
            holder: holder.to_owned(),
            ttl_ms,
            expires: now + Duration::from_millis(u64::from(ttl_ms)),
        };
        let granted = lease.granted(previous.clone());
        // A lease taken over gives up every arm it held, not only those asked for now.
        let replaced: Vec<String> = arms
            .iter()
            .filter_map(|&arm| held.get(arm).and_then(Option::as_ref).map(|l| l.id.clone()))
            .collect();
        for slot in held.iter_mut() {
            if slot.as_ref().is_some_and(|l| replaced.contains(&l.id)) {
                *slot = None;
            }
        }
        for &arm in arms {
            if let Some(slot) = held.get_mut(arm) {
                *slot = Some(lease.clone());
            }
        }
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
        let granted = own_lease(&held, lease_id)?.granted(None);
        let expires = Instant::now() + Duration::from_millis(u64::from(granted.ttl_ms));
        for lease in held.iter_mut().flatten().filter(|lease| lease.is(lease_id)) {
            lease.expires = expires;
        }
        drop(held);
        tracing::debug!(holder = granted.holder, "lease renewed");
        self.inner.changed.send_modify(|n| *n += 1);
        Ok(granted)
    }

    /// Gives up the lease with id `lease_id`.
    pub fn release(&self, lease_id: &str) -> Result<(), LeaseError> {
        let mut held = self.held();
        let holder = own_lease(&held, lease_id)?.holder.clone();
        for slot in held.iter_mut() {
            if slot.as_ref().is_some_and(|lease| lease.is(lease_id)) {
                *slot = None;
            }
        }
        drop(held);
        self.inner.audit.record(AccessEvent::LeaseReleased { holder });
        self.inner.changed.send_modify(|n| *n += 1);
        Ok(())
    }

    /// Admits a call carrying `metadata` that needs the lease of every arm.
    pub fn admit(&self, metadata: &MetadataMap) -> Result<(), LeaseError> {
        let every: Vec<usize> = (0..self.held().len()).collect();
        self.admit_arms(metadata, &every)
    }

    /// Admits a call carrying `metadata` that moves the arms at `arms`: it must carry the lease
    /// of each.
    pub fn admit_arms(&self, metadata: &MetadataMap, arms: &[usize]) -> Result<(), LeaseError> {
        let presented = metadata
            .get(LEASE_HEADER)
            .map(|value| value.to_str().unwrap_or_default());
        let held = self.held();
        let now = Instant::now();
        for lease in arms.iter().map(|&arm| held.get(arm).and_then(Option::as_ref)) {
            match (presented, lease) {
                (None, None) => return Err(LeaseError::Required),
                (Some(_), None) => return Err(LeaseError::Expired),
                (Some(id), Some(lease)) if lease.is(id) => {}
                (_, Some(other)) => return Err(other.held_error(now)),
            }
        }
        Ok(())
    }

    /// Who holds the first arm's lease now, if anyone.
    pub fn holder(&self) -> Option<HolderNow> {
        self.holder_of(0)
    }

    /// Who holds the lease of the arm at `arm` now, if anyone.
    pub fn holder_of(&self, arm: usize) -> Option<HolderNow> {
        let now = Instant::now();
        self.held().get(arm).and_then(Option::as_ref).map(|lease| HolderNow {
            holder: lease.holder.clone(),
            expires_in: lease.expires.saturating_duration_since(now),
        })
    }

    /// Changes each time the first arm's lease expires.
    pub fn expiries(&self) -> watch::Receiver<u64> {
        self.expiries_of(0)
    }

    /// Changes each time the lease of the arm at `arm` expires.
    pub fn expiries_of(&self, arm: usize) -> watch::Receiver<u64> {
        let first = &self.inner.expired[0];
        self.inner.expired.get(arm).unwrap_or(first).subscribe()
    }

    /// Every arm's lease, with the leases past their deadline expired first (each recorded
    /// once, however many arms it covered).
    fn held(&self) -> MutexGuard<'_, Vec<Option<Held>>> {
        let mut held = self.inner.held.lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let mut expired: Vec<Held> = Vec::new();
        for (arm, slot) in held.iter_mut().enumerate() {
            if slot.as_ref().is_some_and(|lease| lease.expires <= now)
                && let Some(lease) = slot.take()
            {
                if let Some(counter) = self.inner.expired.get(arm) {
                    counter.send_modify(|n| *n += 1);
                }
                if !expired.iter().any(|seen| seen.id == lease.id) {
                    expired.push(lease);
                }
            }
        }
        for lease in expired {
            self.inner
                .audit
                .record(AccessEvent::LeaseExpired { holder: lease.holder });
        }
        held
    }
}

/// The lease with id `id`, or why the caller does not hold it.
fn own_lease<'a>(held: &'a [Option<Held>], id: &str) -> Result<&'a Held, LeaseError> {
    if let Some(lease) = held.iter().flatten().find(|lease| lease.is(id)) {
        return Ok(lease);
    }
    match held.iter().flatten().next() {
        Some(other) => Err(other.held_error(Instant::now())),
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
            Leases { inner }
                .held()
                .iter()
                .flatten()
                .map(|lease| lease.expires)
                .min()
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
mod tests;
