//! How the port task treats its bus: retries, when a servo counts as lost, the reading plan.

/// How a [`crate::FeetechArm`] treats its bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeetechArmConfig {
    /// The port name shown in status (e.g. `/dev/ttyUSB0`).
    pub port: String,
    /// Extra attempts after a lost or corrupted reply, per servo and transaction. Replaces
    /// the bus's own retries, so that every attempt is counted.
    pub retries: u32,
    /// Transactions in a row that must fail after their retries before a servo counts as
    /// lost ([`fakesim_arm::ServoHealth::responding`] false); at least 1.
    pub lost_after: u32,
    /// Switch torque off when the arm is closed or every handle is dropped (as LeRobot's
    /// `disable_torque_on_disconnect`).
    pub torque_off_on_close: bool,
    /// Readings per read of the whole state block (load, voltage, temperature, Status,
    /// speed, current); the readings between read the positions only and carry the rest
    /// over from the last block. Every reply's error byte is current either way. 1 reads
    /// the block every time.
    pub state_every: u32,
    /// The `Acceleration` every servo was configured with, which a servo that resets loses
    /// (`None`: not known; the value read first after configuring is expected).
    pub acceleration: Option<u8>,
}

impl FeetechArmConfig {
    /// Defaults for a port: 1 retry, lost after 3 failed transactions in a row (6 attempts
    /// unanswered: a silent servo is seen within 6 reply timeouts, while a bus that loses one
    /// reply in ten loses a servo about once in a million readings), torque off on close, the
    /// state block every 4th reading.
    pub fn new(port: impl Into<String>) -> Self {
        Self {
            port: port.into(),
            retries: 1,
            lost_after: 3,
            torque_off_on_close: true,
            state_every: 4,
            acceleration: None,
        }
    }
}
