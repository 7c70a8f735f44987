//! Notices a servo that reset its RAM behind the port task's back (a supply that sagged while
//! the adapter stayed up): its torque flag or lock no longer match what the task last
//! confirmed, or its acceleration no longer holds what was configured.

use fakesim_arm::Joint;
use feetech::control_table::{ACCELERATION, LOCK, Register, TORQUE_ENABLE};

/// First address of the RAM read that checks a servo (`Torque_Enable`).
pub(crate) const ADDRESS: u8 = TORQUE_ENABLE.address;
/// Bytes of that read: `Torque_Enable` through `Lock`.
pub(crate) const LEN: u8 = LOCK.address + LOCK.size - ADDRESS;

/// What the task expects of each servo's RAM: the acceleration the servos were configured with,
/// or, where that is not known, the one read first after they were configured (`None` until then).
#[derive(Debug, Default)]
pub(crate) struct RamWatch {
    configured: Option<i32>,
    acceleration: [Option<i32>; 6],
}

impl RamWatch {
    /// A watch expecting `configured` in every servo's `Acceleration` (`None`: the first read).
    pub(crate) fn new(configured: Option<u8>) -> Self {
        let configured = configured.map(i32::from);
        Self {
            configured,
            acceleration: [configured; 6],
        }
    }

    /// Forgets the expectations (the servos are being configured again).
    pub(crate) fn forget(&mut self) {
        self.acceleration = [self.configured; 6];
    }

    /// Forgets one servo's expectation (it was configured again).
    pub(crate) fn forget_joint(&mut self, joint: Joint) {
        self.acceleration[joint.index()] = self.configured;
    }

    /// Compares one servo's RAM (`LEN` bytes from `ADDRESS`) with what is expected of it,
    /// given the torque it last confirmed; says what differs, if anything.
    pub(crate) fn check(&mut self, joint: Joint, ram: &[u8], torque: Option<bool>) -> Option<String> {
        let field = |register: &Register| {
            ram.get(usize::from(register.address - ADDRESS)..)
                .map(|bytes| register.decode(bytes))
        };
        let (Some(enabled), Some(acceleration), Some(lock)) =
            (field(&TORQUE_ENABLE), field(&ACCELERATION), field(&LOCK))
        else {
            return None;
        };
        if let Some(on) = torque {
            let expected = i32::from(on);
            if enabled != expected || lock != expected {
                return Some(format!(
                    "torque {enabled} and lock {lock} where {expected} and {expected} were written"
                ));
            }
        }
        let baseline = self.acceleration[joint.index()].get_or_insert(acceleration);
        (*baseline != acceleration).then(|| format!("acceleration {acceleration} where {baseline} was configured"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ram(torque: u8, acceleration: u8, lock: u8) -> Vec<u8> {
        let mut bytes = vec![0; usize::from(LEN)];
        bytes[0] = torque;
        bytes[1] = acceleration;
        bytes[usize::from(LOCK.address - ADDRESS)] = lock;
        bytes
    }

    #[test]
    fn a_servo_that_kept_its_ram_passes() {
        let mut watch = RamWatch::default();
        assert_eq!(watch.check(Joint::ElbowFlex, &ram(1, 254, 1), Some(true)), None);
        assert_eq!(watch.check(Joint::ElbowFlex, &ram(0, 254, 0), Some(false)), None);
        assert_eq!(
            watch.check(Joint::ElbowFlex, &ram(1, 254, 0), None),
            None,
            "torque unknown"
        );
    }

    #[test]
    fn a_reset_shows_in_the_torque_flag_the_lock_or_the_acceleration() {
        let mut watch = RamWatch::default();
        assert_eq!(watch.check(Joint::WristFlex, &ram(1, 254, 1), Some(true)), None);
        let torque = watch.check(Joint::WristFlex, &ram(0, 0, 1), Some(true)).unwrap();
        assert!(torque.contains("torque 0"), "{torque}");
        let lock = watch.check(Joint::WristFlex, &ram(0, 254, 1), Some(false)).unwrap();
        assert!(lock.contains("lock 1"), "{lock}");
        let acceleration = watch.check(Joint::WristFlex, &ram(0, 0, 0), Some(false)).unwrap();
        assert!(acceleration.contains("acceleration 0 where 254"), "{acceleration}");
        watch.forget_joint(Joint::WristFlex);
        assert_eq!(
            watch.check(Joint::WristFlex, &ram(0, 0, 0), Some(false)),
            None,
            "a new baseline"
        );
    }

    #[test]
    fn a_servo_that_reset_before_its_first_read_differs_from_the_configured_acceleration() {
        let mut watch = RamWatch::new(Some(254));
        let first = watch.check(Joint::Gripper, &ram(0, 0, 0), Some(false)).unwrap();
        assert!(first.contains("acceleration 0 where 254"), "{first}");
        watch.forget_joint(Joint::Gripper);
        assert!(
            watch.check(Joint::Gripper, &ram(0, 0, 0), Some(false)).is_some(),
            "configured again, the expectation is still what was written"
        );
        assert_eq!(watch.check(Joint::Gripper, &ram(0, 254, 0), Some(false)), None);
    }

    #[test]
    fn a_short_read_is_no_verdict() {
        assert_eq!(RamWatch::default().check(Joint::Gripper, &[1, 2], Some(true)), None);
    }
}
