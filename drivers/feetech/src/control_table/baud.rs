//! The `BAUD_RATE` register's index table (Feetech's official table, not LeRobot's).

/// Baud rate for each value of the `BAUD_RATE` register (index 0 = 1 Mbps).
pub const BAUD_RATES: [u32; 8] = [1_000_000, 500_000, 250_000, 128_000, 115_200, 76_800, 57_600, 38_400];

/// Factory default and SO-101 bus speed.
pub const DEFAULT_BAUD_RATE: u32 = 1_000_000;

/// Baud rate selected by register value `index`.
pub fn baud_rate(index: u8) -> Option<u32> {
    BAUD_RATES.get(usize::from(index)).copied()
}

/// Register value that selects `baud`, if the servo supports it.
pub fn baud_index(baud: u32) -> Option<u8> {
    BAUD_RATES
        .iter()
        .position(|b| *b == baud)
        .and_then(|i| u8::try_from(i).ok())
}
