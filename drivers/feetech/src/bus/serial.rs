//! Opening real serial ports (and pseudo-terminals) with tokio-serial.

use std::io;
use std::path::{Path, PathBuf};

use tokio_serial::{DataBits, FlowControl, Parity, SerialPort, SerialPortBuilderExt, StopBits};

use super::{Bus, BusConfig, BusError};

/// Transports whose line speed can be changed (needed to scan baud rates and to move a
/// servo to another baud rate).
pub trait BaudControl {
    /// The current line speed.
    fn baud_rate(&self) -> io::Result<u32>;
    /// Switches the line speed.
    fn set_baud_rate(&mut self, baud: u32) -> io::Result<()>;
}

impl BaudControl for tokio_serial::SerialStream {
    fn baud_rate(&self) -> io::Result<u32> {
        SerialPort::baud_rate(self).map_err(io::Error::from)
    }

    fn set_baud_rate(&mut self, baud: u32) -> io::Result<()> {
        SerialPort::set_baud_rate(self, baud).map_err(io::Error::from)
    }
}

/// Opens `path` as a raw 8N1 port without flow control at `baud`
/// ([`crate::control_table::DEFAULT_BAUD_RATE`] for an SO-101), best-effort low latency.
/// Must be called inside a tokio runtime.
pub fn open(path: impl AsRef<Path>, baud: u32) -> Result<tokio_serial::SerialStream, BusError> {
    let path = path.as_ref();
    let port = tokio_serial::new(path.to_string_lossy(), baud)
        .data_bits(DataBits::Eight)
        .parity(Parity::None)
        .stop_bits(StopBits::One)
        .flow_control(FlowControl::None)
        .open_native_async()
        .map_err(|e| BusError::PortGone(io::Error::from(e)))?;
    request_low_latency(path);
    Ok(port)
}

impl Bus<tokio_serial::SerialStream> {
    /// Opens a serial port (see [`open`]) and wraps it in a bus.
    pub fn open(path: impl AsRef<Path>, baud: u32, config: BusConfig) -> Result<Self, BusError> {
        Ok(Self::new(open(path, baud)?, config))
    }
}

impl<T: BaudControl> Bus<T> {
    /// Switches the host side of the line to `baud` (servos keep theirs).
    pub fn set_port_baud_rate(&mut self, baud: u32) -> Result<(), BusError> {
        self.port.set_baud_rate(baud).map_err(BusError::PortGone)
    }
}

/// USB-serial adapters driven by `ftdi_sio` buffer replies for `latency_timer` ms (16 by
/// default); set it to 1 ms when the sysfs knob exists and is writable. CDC-ACM and CH34x
/// adapters have no such knob; failures are only logged.
fn request_low_latency(path: &Path) {
    let Some(knob) = latency_timer_path(path) else {
        return;
    };
    match std::fs::read_to_string(&knob) {
        Ok(value) if value.trim() == "1" => {}
        Ok(value) => match std::fs::write(&knob, "1") {
            Ok(()) => {
                tracing::info!(knob = %knob.display(), was = value.trim(), "latency timer set to 1 ms")
            }
            Err(error) => {
                tracing::warn!(knob = %knob.display(), %error, "cannot lower the adapter latency timer")
            }
        },
        Err(error) => tracing::debug!(knob = %knob.display(), %error, "no latency timer"),
    }
}

/// `/sys/bus/usb-serial/devices/<tty>/latency_timer` for the tty behind `path` (symlinks
/// such as `/dev/serial/by-id/...` resolved), if it exists.
fn latency_timer_path(path: &Path) -> Option<PathBuf> {
    let device = std::fs::canonicalize(path).ok()?;
    let name = device.file_name()?;
    let knob = Path::new("/sys/bus/usb-serial/devices")
        .join(name)
        .join("latency_timer");
    knob.exists().then_some(knob)
}
