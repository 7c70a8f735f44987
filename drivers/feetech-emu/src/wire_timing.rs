//! Wire timing: how long bytes and servo turnarounds take on a real half-duplex bus.

use std::time::Duration;

/// Bits per byte on the wire in 8N1 framing (start bit, 8 data bits, stop bit).
const BITS_PER_BYTE: u64 = 10;

/// Unit of the Return_Delay_Time register.
pub const RETURN_DELAY_UNIT: Duration = Duration::from_micros(2);

/// Time `bytes` bytes occupy on a wire running at `baud` bits per second.
pub fn transfer_time(bytes: usize, baud: u32) -> Duration {
    if baud == 0 {
        return Duration::ZERO;
    }
    let bits = u64::try_from(bytes).unwrap_or(u64::MAX).saturating_mul(BITS_PER_BYTE);
    Duration::from_nanos(bits.saturating_mul(1_000_000_000) / u64::from(baud))
}

/// Servo turnaround for a Return_Delay_Time register value.
pub fn return_delay(register: u8) -> Duration {
    RETURN_DELAY_UNIT * u32::from(register)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_time_is_ten_bits_at_the_line_rate() {
        assert_eq!(transfer_time(1, 1_000_000), Duration::from_micros(10));
        // One 6-servo control cycle of the issue: 166 bytes, 1.66 ms.
        assert_eq!(transfer_time(166, 1_000_000), Duration::from_micros(1660));
        assert_eq!(transfer_time(8, 115_200), Duration::from_nanos(694_444));
        assert_eq!(transfer_time(8, 0), Duration::ZERO);
        assert_eq!(return_delay(250), Duration::from_micros(500));
    }
}
