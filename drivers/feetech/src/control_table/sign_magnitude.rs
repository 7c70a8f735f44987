//! Sign-magnitude encoding used by several registers (sign in bit `b`, magnitude below it).

/// Encodes `value` with its sign in bit `sign_bit`; `None` when the magnitude does not fit
/// below the sign bit (or the sign bit is beyond bit 31).
pub fn encode_sign_magnitude(value: i32, sign_bit: u8) -> Option<u32> {
    if sign_bit > 31 {
        return None;
    }
    let magnitude = value.unsigned_abs();
    let limit = 1_u32 << sign_bit;
    if magnitude >= limit {
        return None;
    }
    Some(if value < 0 { magnitude | limit } else { magnitude })
}

/// Decodes a raw register value whose sign is in bit `sign_bit`; bits above it are ignored.
pub fn decode_sign_magnitude(raw: u32, sign_bit: u8) -> i32 {
    let bit = u32::from(sign_bit.min(31));
    let magnitude = raw & ((1_u32 << bit) - 1);
    let magnitude = i32::try_from(magnitude).unwrap_or(i32::MAX);
    if (raw >> bit) & 1 == 1 { -magnitude } else { magnitude }
}
