//! A record of every write the host made, so tests can check bus traffic (EEPROM wear,
//! the goals sent when torque comes on).

use std::collections::VecDeque;
use std::time::Duration;

use feetech::control_table::{FIRST_RAM_ADDRESS, Register};

/// Records kept at most; older ones are dropped first.
const CAPACITY: usize = 100_000;

/// One host write as a servo executed it (WRITE, SYNC_WRITE entry, or ACTION of a REG_WRITE).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteRecord {
    /// Bus time of the write (since the bus started).
    pub at: Duration,
    /// Servo written.
    pub id: u8,
    /// First address written.
    pub addr: u8,
    /// Bytes written.
    pub data: Vec<u8>,
    /// Present position just before the write.
    pub present_before: i32,
    /// Whether torque was on just before the write.
    pub torque_before: bool,
}

impl WriteRecord {
    /// Whether any written byte lies in the EEPROM area.
    pub fn touches_eeprom(&self) -> bool {
        self.addr < FIRST_RAM_ADDRESS
    }

    /// The value written to `register`, when this write covers all of its bytes.
    pub fn value(&self, register: &Register) -> Option<i32> {
        let start = usize::from(register.address.checked_sub(self.addr)?);
        let bytes = self.data.get(start..start + usize::from(register.size))?;
        Some(register.decode(bytes))
    }
}

/// The bounded log.
#[derive(Debug, Default)]
pub(crate) struct WriteLog {
    records: VecDeque<WriteRecord>,
}

impl WriteLog {
    /// Appends a record, dropping the oldest when full.
    pub(crate) fn push(&mut self, record: WriteRecord) {
        if self.records.len() == CAPACITY {
            self.records.pop_front();
        }
        self.records.push_back(record);
    }

    /// Every record, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &WriteRecord> {
        self.records.iter()
    }

    /// Forgets every record.
    pub(crate) fn clear(&mut self) {
        self.records.clear();
    }
}
