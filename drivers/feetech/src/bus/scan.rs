//! Finding servos: broadcast or per-id PING over a list of baud rates, with model and
//! firmware, and setting up a lone new servo.

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;

use super::link::Received;
use super::serial::BaudControl;
use super::{Bus, BusError};
use crate::control_table::{BAUD_RATES, FIRMWARE_MAJOR_VERSION, MODEL_NUMBER, model_name};
use crate::protocol::status::{ServoError, StatusPacket};
use crate::protocol::{BROADCAST_ID, MAX_SERVO_ID, instruction};

/// How to look for servos at one baud rate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanMethod {
    /// One broadcast PING; every servo answers (fast, but servos sharing an id collide).
    Broadcast,
    /// PING each of these ids in turn (slow, robust).
    Ids(Vec<u8>),
}

impl ScanMethod {
    /// PING every valid id, 0 to 253.
    pub fn all_ids() -> Self {
        Self::Ids((0..=MAX_SERVO_ID).collect())
    }
}

/// What to scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanOptions {
    /// Baud rates to try, in order.
    pub baud_rates: Vec<u32>,
    /// How to probe at each baud rate.
    pub method: ScanMethod,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            baud_rates: BAUD_RATES.to_vec(),
            method: ScanMethod::Broadcast,
        }
    }
}

/// A servo that answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundServo {
    /// Its id.
    pub id: u8,
    /// Baud rate it answered at (`None` when scanning only the current rate).
    pub baud_rate: Option<u32>,
    /// Model number (777 for an STS3215), if it could be read.
    pub model_number: Option<u16>,
    /// Model name, if known.
    pub model: Option<&'static str>,
    /// Firmware `(major, minor)`, if it could be read.
    pub firmware: Option<(u8, u8)>,
    /// Error flags in its PING reply.
    pub error: ServoError,
}

/// Progress of a scan, for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanEvent {
    /// Starting at this baud rate.
    BaudRate(u32),
    /// Pinging this id.
    Probe(u8),
    /// A servo answered.
    Found(FoundServo),
}

/// Bytes read at address 0 to get firmware (0, 1) and model number (3, 4) in one READ.
const INFO_LEN: u8 = MODEL_NUMBER.address + MODEL_NUMBER.size - FIRMWARE_MAJOR_VERSION.address;

impl<T: AsyncRead + AsyncWrite + Unpin + Send> Bus<T> {
    /// Scans at the port's current baud rate.
    pub async fn scan_here(
        &mut self,
        method: &ScanMethod,
        progress: &mut (dyn FnMut(ScanEvent) + Send),
    ) -> Result<Vec<FoundServo>, BusError> {
        let answers = match method {
            ScanMethod::Broadcast => self.broadcast_ping().await?,
            ScanMethod::Ids(ids) => {
                let mut answers = Vec::new();
                for id in ids {
                    progress(ScanEvent::Probe(*id));
                    match self.ping(*id).await {
                        Ok(reply) => answers.push((reply.id, reply.error)),
                        Err(error) if error.is_retryable() => {}
                        Err(error) => return Err(error),
                    }
                }
                answers
            }
        };
        let mut found = Vec::with_capacity(answers.len());
        for (id, error) in answers {
            let servo = self.identify(id, error).await?;
            progress(ScanEvent::Found(servo.clone()));
            found.push(servo);
        }
        Ok(found)
    }

    /// Broadcast PING: collects every valid reply until the timeout, sorted by id.
    async fn broadcast_ping(&mut self) -> Result<Vec<(u8, ServoError)>, BusError> {
        self.send(&instruction::ping(BROADCAST_ID)).await?;
        let deadline = Instant::now() + self.config.timeout;
        let mut answers: Vec<(u8, ServoError)> = Vec::new();
        loop {
            match self.receive(deadline).await? {
                Received::Frame(frame) => {
                    let status = StatusPacket::from(frame);
                    if status.params.is_empty() && !answers.iter().any(|(id, _)| *id == status.id) {
                        answers.push((status.id, status.error));
                    }
                }
                Received::Corrupt(error) => tracing::debug!(%error, "corrupt broadcast ping reply"),
                Received::Deadline { .. } => break,
            }
        }
        answers.sort_by_key(|(id, _)| *id);
        Ok(answers)
    }

    /// Reads model number and firmware of a servo that answered a PING.
    async fn identify(&mut self, id: u8, error: ServoError) -> Result<FoundServo, BusError> {
        let info = match self.read(id, FIRMWARE_MAJOR_VERSION.address, INFO_LEN).await {
            Ok(reply) => Some(reply.value),
            Err(e) if e.is_retryable() => {
                tracing::warn!(id, error = %e, "servo answered PING but not READ");
                None
            }
            Err(e) => return Err(e),
        };
        let model_number = info.as_ref().and_then(|bytes| {
            let at = usize::from(MODEL_NUMBER.address - FIRMWARE_MAJOR_VERSION.address);
            let value = MODEL_NUMBER.decode(bytes.get(at..)?);
            u16::try_from(value).ok()
        });
        let firmware = info.as_ref().and_then(|b| Some((*b.first()?, *b.get(1)?)));
        Ok(FoundServo {
            id,
            baud_rate: None,
            model_number,
            model: model_number.and_then(model_name),
            firmware,
            error,
        })
    }

    /// Scans every baud rate of `options`, then puts the port back at its original rate.
    pub async fn scan(
        &mut self,
        options: &ScanOptions,
        progress: &mut (dyn FnMut(ScanEvent) + Send),
    ) -> Result<Vec<FoundServo>, BusError>
    where
        T: BaudControl,
    {
        let original = self.port.baud_rate().map_err(BusError::PortGone)?;
        let scanned = self.scan_baud_rates(options, progress).await;
        self.set_port_baud_rate(original)?;
        scanned
    }

    async fn scan_baud_rates(
        &mut self,
        options: &ScanOptions,
        progress: &mut (dyn FnMut(ScanEvent) + Send),
    ) -> Result<Vec<FoundServo>, BusError>
    where
        T: BaudControl,
    {
        let mut found = Vec::new();
        for baud in &options.baud_rates {
            progress(ScanEvent::BaudRate(*baud));
            self.set_port_baud_rate(*baud)?;
            let mut here = self.scan_here(&options.method, progress).await?;
            for servo in &mut here {
                servo.baud_rate = Some(*baud);
            }
            found.extend(here);
        }
        Ok(found)
    }

    /// Finds the only servo on the bus (at any of `options.baud_rates`) and gives it `id`
    /// and `baud` (as new servos all ship as id 1 at 1 Mbps, connect them one at a time).
    /// Leaves the port at `baud`.
    pub async fn setup_lone_servo(&mut self, options: &ScanOptions, id: u8, baud: u32) -> Result<FoundServo, BusError>
    where
        T: BaudControl,
    {
        let found = self.scan(options, &mut |_| {}).await?;
        let [servo] = found.as_slice() else {
            return Err(BusError::NotAlone { found: found.len() });
        };
        let mut servo = servo.clone();
        if let Some(current) = servo.baud_rate {
            self.set_port_baud_rate(current)?;
        }
        self.change_id(servo.id, id).await?;
        servo.id = id;
        self.change_baud_rate(id, baud).await?;
        servo.baud_rate = Some(baud);
        Ok(servo)
    }
}
