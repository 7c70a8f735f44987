//! The shared bus: every servo, the faults, and how one instruction frame turns into the
//! status packets that go back on the wire.

use std::sync::Arc;
use std::time::Duration;

use feetech::protocol::BROADCAST_ID;
use feetech::protocol::frame::Frame;
use feetech::protocol::instruction::Request;
use feetech::protocol::status::StatusPacket;

use crate::clock::Clock;
use crate::config::EmuConfig;
use crate::faults::FaultConfig;
use crate::grip::Grip;
use crate::rng::SeededRng;
use crate::script::push::Pushing;
use crate::script::{Push, Script};
use crate::servo::Servo;
use crate::write_log::{WriteLog, WriteRecord};

/// One status packet ready for the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Encoded bytes (possibly corrupted by fault injection).
    pub bytes: Vec<u8>,
    /// Return_Delay_Time register of the answering servo (2 us units).
    pub return_delay: u8,
}

/// Everything behind the shared handle.
#[derive(Debug)]
pub(crate) struct BusState {
    pub(crate) servos: Vec<Servo>,
    pub(crate) faults: FaultConfig,
    pub(crate) baud: u32,
    pub(crate) wire_timing: bool,
    pub(crate) writes: WriteLog,
    rng: SeededRng,
    clock: Arc<dyn Clock>,
    synced_at: Duration,
    /// Bus time up to which overloads were checked for lock-ups.
    lockups_checked_at: Duration,
    /// The hand's script and the bus time it started at.
    script: Option<(Script, Duration)>,
    pushes: Vec<Pushing>,
}

/// A servo's answer before fault injection.
struct Answer {
    id: u8,
    params: Vec<u8>,
    index: usize,
}

impl BusState {
    /// Builds the bus from its configuration, with time starting now on `clock`.
    pub(crate) fn new(config: &EmuConfig, clock: Arc<dyn Clock>) -> Self {
        let mut state = Self {
            servos: config.servos.iter().map(Servo::new).collect(),
            faults: config.faults.clone(),
            baud: config.baud,
            wire_timing: config.wire_timing,
            writes: WriteLog::default(),
            rng: SeededRng::new(config.seed),
            synced_at: clock.elapsed(),
            lockups_checked_at: clock.elapsed(),
            script: None,
            pushes: config.pushes.iter().cloned().map(Pushing::new).collect(),
            clock,
        };
        state.set_script(config.script.clone());
        state
    }

    /// Bus time: how long the bus has run, on its clock.
    pub(crate) fn elapsed(&self) -> Duration {
        self.clock.elapsed()
    }

    /// Replaces the hand's script, which starts now (`None`: the hand lets go).
    pub(crate) fn set_script(&mut self, script: Option<Script>) {
        self.sync();
        self.script = script.map(|script| (script, self.synced_at));
        self.grip_all();
        self.refresh();
    }

    /// Adds a push of the hand (its window in bus time).
    pub(crate) fn push(&mut self, push: Push) {
        self.sync();
        self.pushes.push(Pushing::new(push));
        self.grip_all();
        self.refresh();
    }

    /// Lets the hand act on every servo at the current bus time.
    fn grip_all(&mut self) {
        let now = self.synced_at;
        self.pushes.retain(|push| !push.is_over(now));
        for servo in &mut self.servos {
            let id = servo.id();
            let held = self
                .pushes
                .iter_mut()
                .filter(|push| push.id() == id)
                .find_map(|push| push.hold(now, servo.present_steps()));
            let guided = self.script.as_ref().and_then(|(script, start)| {
                let (at, velocity) = script.motion(id, now.saturating_sub(*start))?;
                Some(Grip::Guide { at, velocity })
            });
            servo.grip(held.map(|at| Grip::Hold { at }).or(guided));
        }
    }

    /// Advances every servo to the clock's current time and refreshes their readings.
    pub(crate) fn sync(&mut self) {
        let now = self.clock.elapsed();
        let dt = now.saturating_sub(self.synced_at);
        self.synced_at = now;
        if !dt.is_zero() {
            for servo in &mut self.servos {
                let forced = self.faults.forced(servo.id(), self.synced_at);
                servo.advance(dt, forced);
            }
            self.grip_all();
        }
        self.refresh();
    }

    /// Rewrites every servo's present readings (after any change of state) and locks up the
    /// servos an overload has locked up since the last time.
    pub(crate) fn refresh(&mut self) {
        let since = self.lockups_checked_at;
        self.lockups_checked_at = self.synced_at;
        for servo in &mut self.servos {
            let id = servo.id();
            if !servo.locked_up && self.faults.locks_up(id, since, self.synced_at) {
                tracing::debug!(id, "servo locked up after an overload");
                servo.locked_up = true;
            }
            servo.refresh(self.faults.forced(id, self.synced_at));
        }
    }

    /// Indices of the servos that hear a frame sent to `id` (silent or locked-up servos and
    /// servos at another baud rate hear nothing).
    fn listeners(&self, id: u8) -> Vec<usize> {
        self.servos
            .iter()
            .enumerate()
            .filter(|(_, s)| id == BROADCAST_ID || s.id() == id)
            .filter(|(_, s)| {
                s.baud() == Some(self.baud) && !self.faults.is_silent_at(s.id(), self.synced_at) && !s.locked_up
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// Executes one instruction frame and returns the replies in wire order.
    pub(crate) fn handle_frame(&mut self, frame: &Frame) -> Vec<Reply> {
        self.sync();
        let request = match Request::parse(frame) {
            Ok(request) => request,
            Err(error) => {
                tracing::debug!(%error, id = frame.id, "ignoring instruction");
                return Vec::new();
            }
        };
        let broadcast = frame.id == BROADCAST_ID;
        let answers = self.execute(frame.id, broadcast, &request);
        self.refresh();
        self.encode(answers)
    }

    fn execute(&mut self, id: u8, broadcast: bool, request: &Request) -> Vec<Answer> {
        match request {
            Request::Ping => self.answer_each(id, |_| Some(Vec::new())),
            Request::Read { addr, len } if !broadcast => self.answer_each(id, |servo| servo.read(*addr, *len)),
            Request::Read { .. } => Vec::new(),
            Request::Write { addr, data } => self.run_each(id, broadcast, |servo, log| {
                log.record(servo, *addr, data);
                servo.write(*addr, data);
            }),
            Request::RegWrite { addr, data } => self.run_each(id, broadcast, |servo, _| servo.reg_write(*addr, data)),
            Request::Action => self.run_each(id, broadcast, |servo, log| {
                if let Some((addr, data)) = servo.pending() {
                    log.record(servo, addr, &data);
                }
                servo.action();
            }),
            Request::Reset => self.run_each(id, broadcast, |servo, _| servo.factory_reset()),
            Request::SyncRead { addr, len, ids } if broadcast => ids
                .iter()
                .flat_map(|target| self.answer_each(*target, |servo| servo.read(*addr, *len)))
                .collect(),
            Request::SyncWrite { addr, entries, .. } if broadcast => {
                for (target, data) in entries {
                    self.run_each(*target, false, |servo, log| {
                        log.record(servo, *addr, data);
                        servo.write(*addr, data);
                    });
                }
                Vec::new()
            }
            Request::SyncRead { .. } | Request::SyncWrite { .. } => Vec::new(),
        }
    }

    /// Every listener answers with the data `read` gives (nothing when it gives `None`).
    fn answer_each(&self, id: u8, read: impl Fn(&Servo) -> Option<Vec<u8>>) -> Vec<Answer> {
        let mut answers: Vec<Answer> = self
            .listeners(id)
            .into_iter()
            .filter_map(|index| {
                let servo = self.servos.get(index)?;
                Some(Answer {
                    id: servo.id(),
                    params: read(servo)?,
                    index,
                })
            })
            .collect();
        answers.sort_by_key(|a| a.id);
        answers
    }

    /// Runs `action` on every listener; unicast frames are acknowledged by servos whose
    /// response level asks for it, broadcast frames never.
    fn run_each(&mut self, id: u8, broadcast: bool, action: impl Fn(&mut Servo, &mut Recorder<'_>)) -> Vec<Answer> {
        let mut answers = Vec::new();
        for index in self.listeners(id) {
            let Some(servo) = self.servos.get_mut(index) else {
                continue;
            };
            let acknowledges = !broadcast && servo.acknowledges_writes();
            let mut recorder = Recorder {
                log: &mut self.writes,
                at: self.synced_at,
            };
            action(servo, &mut recorder);
            if acknowledges {
                // The acknowledgement carries the id the frame was addressed to.
                answers.push(Answer {
                    id,
                    params: Vec::new(),
                    index,
                });
            }
        }
        answers
    }

    /// Encodes answers, merging simultaneous answers from different servos sharing an id
    /// (their bytes collide on the wire) and applying reply faults.
    fn encode(&mut self, answers: Vec<Answer>) -> Vec<Reply> {
        let mut replies: Vec<(&Answer, Reply)> = Vec::new();
        for answer in &answers {
            let Some(servo) = self.servos.get(answer.index) else {
                continue;
            };
            let error = servo.status(self.faults.forced(servo.id(), self.synced_at));
            let bytes = StatusPacket::new(answer.id, error, answer.params.clone())
                .to_frame()
                .encode();
            match replies.last_mut() {
                Some((previous, reply)) if previous.id == answer.id && previous.index != answer.index => {
                    collide(&mut reply.bytes, &bytes);
                }
                _ => replies.push((
                    answer,
                    Reply {
                        bytes,
                        return_delay: servo.return_delay(),
                    },
                )),
            }
        }
        replies
            .into_iter()
            .filter_map(|(_, reply)| self.inject_faults(reply))
            .collect()
    }

    fn inject_faults(&mut self, mut reply: Reply) -> Option<Reply> {
        if self.rng.chance(self.faults.drop_reply) {
            return None;
        }
        if self.rng.chance(self.faults.corrupt_checksum)
            && let Some(checksum) = reply.bytes.last_mut()
        {
            *checksum = !*checksum;
        }
        Some(reply)
    }
}

/// Logs host writes at the current bus time.
struct Recorder<'a> {
    log: &'a mut WriteLog,
    at: Duration,
}

impl Recorder<'_> {
    /// Logs a write `servo` is about to execute.
    fn record(&mut self, servo: &Servo, addr: u8, data: &[u8]) {
        self.log.push(WriteRecord {
            at: self.at,
            id: servo.id(),
            addr,
            data: data.to_vec(),
            present_before: servo.present_position(),
            torque_before: servo.torque_enabled(),
        });
    }
}

/// Two servos answering at once on an open-collector bus: a bit reads 1 only if both send
/// 1, and the later servo starts about one byte behind, so the merged bytes are garbage.
fn collide(wire: &mut Vec<u8>, other: &[u8]) {
    for (index, byte) in other.iter().enumerate() {
        match wire.get_mut(index + 1) {
            Some(existing) => *existing &= *byte,
            None => wire.push(*byte),
        }
    }
}
