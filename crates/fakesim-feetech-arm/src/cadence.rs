//! Which readings fetch the whole state block and which only the positions, and what a
//! positions-only reading carries over from the last state block.

use feetech::control_table::ServoState;

use fakesim_arm::Joint;

/// The reading plan: one state-block read, then `every - 1` positions-only reads, and again.
/// A positions-only reading takes load, voltage, temperature, Status, speed, moving and
/// current from the last state block; its reply's error byte is its own.
#[derive(Debug, Clone)]
pub(crate) struct Cadence {
    every: u32,
    /// Positions-only readings left before the next state block.
    positions_left: u32,
    last: [Option<ServoState>; 6],
}

impl Cadence {
    /// A plan with a state block every `every` readings (0 counts as 1: always the block).
    pub(crate) fn new(every: u32) -> Self {
        Self {
            every: every.max(1),
            positions_left: 0,
            last: [None; 6],
        }
    }

    /// Whether the next reading reads the state block: when due, and until every servo has
    /// answered one.
    pub(crate) fn wants_block(&self) -> bool {
        self.positions_left == 0 || self.last.iter().any(Option::is_none)
    }

    /// A positions-only reading of `joint`: `position` with the rest of its last state block.
    pub(crate) fn carry(&self, joint: Joint, position: i32) -> ServoState {
        ServoState {
            position,
            ..self.last[joint.index()].unwrap_or_default()
        }
    }

    /// Keeps a state block `joint` answered.
    pub(crate) fn record(&mut self, joint: Joint, state: ServoState) {
        self.last[joint.index()] = Some(state);
    }

    /// Ends a reading: after a state block every servo answered, the next `every - 1`
    /// readings read positions only; after one some servo missed, the next reads the block
    /// again.
    pub(crate) fn reading_done(&mut self, block: bool, every_servo_answered: bool) {
        self.positions_left = match (block, every_servo_answered) {
            (true, true) => self.every - 1,
            (true, false) => 0,
            (false, _) => self.positions_left.saturating_sub(1),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use feetech::protocol::status::ServoError;

    /// Every servo answers a state block of a still, healthy servo.
    fn record_all(cadence: &mut Cadence) {
        for joint in Joint::ALL {
            cadence.record(joint, state(0, 0, ServoError::empty()));
        }
    }

    fn state(position: i32, load: i32, status: ServoError) -> ServoState {
        ServoState {
            position,
            velocity: 3,
            load,
            voltage: 120,
            temperature: 31,
            status,
            moving: true,
            current: 40,
        }
    }

    /// Runs `readings` readings where every servo answers; true for each state-block read.
    fn plan(cadence: &mut Cadence, readings: usize) -> Vec<bool> {
        (0..readings)
            .map(|_| {
                let block = cadence.wants_block();
                if block {
                    record_all(cadence);
                }
                cadence.reading_done(block, true);
                block
            })
            .collect()
    }

    #[test]
    fn one_state_block_every_n_readings_starting_with_one() {
        let mut cadence = Cadence::new(4);
        let blocks = plan(&mut cadence, 9);
        assert_eq!(blocks, [true, false, false, false, true, false, false, false, true]);
        assert!(plan(&mut Cadence::new(1), 3).iter().all(|block| *block));
        assert!(
            plan(&mut Cadence::new(0), 3).iter().all(|block| *block),
            "0 counts as 1"
        );
    }

    #[test]
    fn the_block_is_read_again_until_every_servo_answered_one() {
        let mut cadence = Cadence::new(4);
        cadence.record(Joint::ShoulderPan, state(0, 0, ServoError::empty()));
        cadence.reading_done(true, false);
        assert!(cadence.wants_block(), "five servos have no block yet");
        record_all(&mut cadence);
        cadence.reading_done(true, false);
        assert!(cadence.wants_block(), "a servo missed the last block");
        cadence.reading_done(true, true);
        assert!(!cadence.wants_block());
    }

    #[test]
    fn a_status_fault_is_seen_within_n_readings() {
        for every in 1..=8 {
            let mut cadence = Cadence::new(every);
            plan(&mut cadence, 3);
            // The fault appears in the Status register now; count readings until one reads it.
            let fault = ServoError::OVERLOAD;
            let mut readings = 0;
            let seen = loop {
                readings += 1;
                let block = cadence.wants_block();
                let reading = if block {
                    cadence.record(Joint::ElbowFlex, state(7, 0, fault));
                    state(7, 0, fault)
                } else {
                    cadence.carry(Joint::ElbowFlex, 7)
                };
                cadence.reading_done(block, true);
                if reading.status.contains(fault) {
                    break readings;
                }
            };
            assert!(seen <= every, "every {every}: seen after {seen} readings");
        }
    }

    #[test]
    fn a_positions_only_reading_carries_the_rest_of_the_last_block() {
        let mut cadence = Cadence::new(4);
        let block = state(2048, 250, ServoError::VOLTAGE);
        cadence.record(Joint::Gripper, block);
        let carried = cadence.carry(Joint::Gripper, 1900);
        assert_eq!(
            carried,
            ServoState {
                position: 1900,
                ..block
            }
        );
        assert_eq!(
            cadence.carry(Joint::WristRoll, 10),
            ServoState {
                position: 10,
                ..ServoState::default()
            }
        );
    }
}
