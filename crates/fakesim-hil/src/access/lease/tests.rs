//! The lease table's rules: one holder per arm, explicit takeover, renewal and expiry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use tokio::sync::mpsc;

fn leases() -> (Leases, mpsc::Receiver<AccessEvent>) {
    let (audit, events) = Audit::channel();
    (Leases::start(audit, 1), events)
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

#[tokio::test(start_paused = true)]
async fn a_pair_s_arms_are_held_apart_or_together() {
    let (audit, _events) = Audit::channel();
    let leases = Leases::start(audit, 2);
    let left = leases.acquire_arms("left teleop", 1000, false, &[0]).unwrap();
    let right = leases.acquire_arms("right teleop", 300, false, &[1]).unwrap();
    assert_eq!(leases.admit_arms(&carrying(&left.lease_id), &[0]), Ok(()));
    assert_eq!(leases.admit_arms(&carrying(&right.lease_id), &[1]), Ok(()));
    let across = leases.admit_arms(&carrying(&left.lease_id), &[1]).unwrap_err();
    assert!(across.to_string().contains("right teleop"), "{across}");
    assert!(
        leases.admit(&carrying(&left.lease_id)).is_err(),
        "one arm's lease moves both"
    );
    assert_eq!(leases.acquire("both", 1000, false).unwrap_err().reason(), "lease_held");
    assert_eq!(leases.holder_of(1).unwrap().holder, "right teleop");

    // The right lease runs out: only the right arm's expiries change.
    let (left_expiries, mut right_expiries) = (leases.expiries_of(0), leases.expiries_of(1));
    leases.renew(&left.lease_id).unwrap();
    right_expiries.changed().await.unwrap();
    assert!(
        !left_expiries.has_changed().unwrap(),
        "the left lease expired with the right"
    );
    assert_eq!(leases.holder_of(1), None);
    assert_eq!(leases.holder_of(0).unwrap().holder, "left teleop");

    // Taking both over gives up the left lease on every arm; the new one moves both.
    let both = leases.acquire("both", 1000, true).unwrap();
    assert_eq!(both.previous_holder.as_deref(), Some("left teleop"));
    assert_eq!(leases.admit(&carrying(&both.lease_id)), Ok(()));
    assert_eq!(leases.renew(&left.lease_id).unwrap_err().reason(), "lease_held");
    leases.release(&both.lease_id).unwrap();
    assert_eq!((leases.holder_of(0), leases.holder_of(1)), (None, None));
}
