//! A call's deadline, from the `grpc-timeout` header its client sent: the daemon gives up on
//! the call's work a little before it, so that its refusal reaches the client in time.

use std::time::{Duration, Instant};
use tonic::metadata::MetadataMap;

/// How much earlier than the client's deadline the daemon gives up: a tenth of the timeout,
/// within these bounds (and at most half of it), the time its answer may take to reach a client
/// on a busy machine.
pub const ANSWER_MARGIN: (Duration, Duration) = (Duration::from_millis(50), Duration::from_millis(500));

/// Longest value of a `grpc-timeout` header: at most 8 digits and a unit.
const MAX_HEADER_LEN: usize = 9;

/// When the daemon stops working on a call received at `received` with `metadata`: the
/// client's deadline less its [`ANSWER_MARGIN`]. `None` when the client set no deadline or sent
/// a malformed one.
pub fn deadline(metadata: &MetadataMap, received: Instant) -> Option<Instant> {
    let timeout = timeout(metadata.get("grpc-timeout")?.to_str().ok()?)?;
    let (least, most) = ANSWER_MARGIN;
    let margin = (timeout / 10).clamp(least, most).min(timeout / 2);
    received.checked_add(timeout - margin)
}

/// A `grpc-timeout` value (digits, then one of `H M S m u n`) as a duration.
fn timeout(value: &str) -> Option<Duration> {
    if value.len() < 2 || value.len() > MAX_HEADER_LEN || !value.is_ascii() {
        return None;
    }
    let (digits, unit) = value.split_at(value.len() - 1);
    let amount: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(amount.checked_mul(3600)?),
        "M" => Duration::from_secs(amount.checked_mul(60)?),
        "S" => Duration::from_secs(amount),
        "m" => Duration::from_millis(amount),
        "u" => Duration::from_micros(amount),
        "n" => Duration::from_nanos(amount),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn with(value: &str) -> MetadataMap {
        let mut metadata = MetadataMap::new();
        metadata.insert("grpc-timeout", value.parse().unwrap());
        metadata
    }

    #[test]
    fn each_unit_of_the_header_reads_as_its_duration() {
        let cases = [
            ("2S", Duration::from_secs(2)),
            ("1500m", Duration::from_millis(1500)),
            ("3M", Duration::from_secs(180)),
            ("1H", Duration::from_secs(3600)),
            ("250000u", Duration::from_millis(250)),
            ("99999999n", Duration::from_nanos(99_999_999)),
        ];
        for (value, expected) in cases {
            assert_eq!(timeout(value), Some(expected), "{value}");
        }
        for bad in ["", "S", "12", "5x", "-5S", "123456789S", "1.5S", "５S"] {
            assert_eq!(timeout(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_daemon_gives_up_a_margin_before_the_clients_deadline() {
        let now = Instant::now();
        assert_eq!(deadline(&with("5S"), now), Some(now + Duration::from_millis(4500)));
        assert_eq!(deadline(&with("60S"), now), Some(now + Duration::from_millis(59_500)));
        assert_eq!(deadline(&with("300m"), now), Some(now + Duration::from_millis(250)));
        assert_eq!(deadline(&with("80m"), now), Some(now + Duration::from_millis(40)));
        assert_eq!(deadline(&MetadataMap::new(), now), None);
        assert_eq!(deadline(&with("soon"), now), None);
    }
}
