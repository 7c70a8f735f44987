//! A daemon on a virtual SO-101: the emulated bus on a pseudo-terminal, its calibration file in
//! a temporary directory, and the server started on that port.

use crate::TestServer;
use fakesim_hil::Mode as StartMode;
use fakesim_hil::Settings;
use feetech::calibration::Calibration;
use feetech_emu::{EmuConfig, PtyBus, ServoBus, VirtualSo101, serve_pty, serve_pty_linked};
use std::path::PathBuf;
use tempfile::TempDir;

/// A server driving a virtual arm; both stop when it is dropped.
pub struct VirtualArmServer {
    /// The daemon.
    pub server: TestServer,
    /// The virtual bus: its servos' registers and write log.
    pub bus: PtyBus,
    _calibration_dir: TempDir,
}

impl VirtualArmServer {
    /// Starts the daemon in `mode` on a virtual SO-101 built from `config`, with 16-pixel
    /// images; `configure` changes any other setting.
    pub async fn start(
        config: EmuConfig,
        mode: StartMode,
        configure: impl FnOnce(&mut Settings) + Send + 'static,
    ) -> anyhow::Result<Self> {
        Self::start_calibrated(config, &VirtualSo101::calibration(), mode, configure).await
    }

    /// The same, with `calibration` as the arm's calibration file (the servos of `config`
    /// should hold it).
    pub async fn start_calibrated(
        config: EmuConfig,
        calibration: &Calibration,
        mode: StartMode,
        configure: impl FnOnce(&mut Settings) + Send + 'static,
    ) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let (bus, port, calibration) = follower(config, calibration, &dir, "virtual_so101").await?;
        Self::serve(bus, port, calibration, dir, mode, configure).await
    }

    /// [`VirtualArmServer::start`] with the bus behind a symbolic link, as udev's by-id links
    /// are: the daemon opens the link, so the bus can be unplugged and plugged back (on a new
    /// device) at the same path.
    pub async fn start_linked(
        config: EmuConfig,
        mode: StartMode,
        configure: impl FnOnce(&mut Settings) + Send + 'static,
    ) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let link = dir.path().join("usb-virtual-so101");
        let bus = serve_pty_linked(ServoBus::real_time(&config), &link)?;
        let file = dir.path().join("virtual_so101.json");
        VirtualSo101::calibration().save(&file)?;
        Self::serve(bus, link, file, dir, mode, configure).await
    }

    async fn serve(
        bus: PtyBus,
        port: PathBuf,
        calibration: PathBuf,
        dir: TempDir,
        mode: StartMode,
        configure: impl FnOnce(&mut Settings) + Send + 'static,
    ) -> anyhow::Result<Self> {
        let server = TestServer::start_with(move |s| {
            s.port = Some(port);
            s.calibration = Some(calibration);
            s.mode = mode;
            s.image_size = 16;
            configure(s);
        })
        .await?;
        Ok(VirtualArmServer {
            server,
            bus,
            _calibration_dir: dir,
        })
    }

    /// Goal-position writes on the bus since its write log was last cleared.
    pub fn goal_writes(&self) -> usize {
        goal_writes(&self.bus)
    }
}

/// A daemon driving a pair: two virtual SO-101s, the left and the right follower.
pub struct VirtualPairServer {
    /// The daemon.
    pub server: TestServer,
    /// The left and the right arm's virtual buses.
    pub buses: [PtyBus; 2],
    _calibration_dir: TempDir,
}

impl VirtualPairServer {
    /// Starts the daemon in `mode` on two virtual SO-101s holding the nominal calibration, with
    /// 16-pixel images; `configure` changes any other setting.
    pub async fn start(
        mode: StartMode,
        configure: impl FnOnce(&mut Settings) + Send + 'static,
    ) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let calibration = VirtualSo101::calibration();
        let (left, left_port, left_file) = follower(VirtualSo101::config(), &calibration, &dir, "left").await?;
        let (right, right_port, right_file) = follower(VirtualSo101::config(), &calibration, &dir, "right").await?;
        let server = TestServer::start_with(move |s| {
            s.pair = true;
            s.pair_ports = [Some(left_port), Some(right_port)];
            s.pair_calibrations = [Some(left_file), Some(right_file)];
            s.mode = mode;
            s.image_size = 16;
            configure(s);
        })
        .await?;
        Ok(VirtualPairServer {
            server,
            buses: [left, right],
            _calibration_dir: dir,
        })
    }
}

/// Goal-position writes on `bus` since its write log was last cleared.
pub fn goal_writes(bus: &PtyBus) -> usize {
    bus.servos()
        .write_log()
        .iter()
        .filter(|w| w.value(&feetech::control_table::GOAL_POSITION).is_some())
        .count()
}

/// A virtual follower on a pseudo-terminal and its calibration saved as `name`.json in `dir`:
/// the bus, its device and the file.
async fn follower(
    config: EmuConfig,
    calibration: &Calibration,
    dir: &TempDir,
    name: &str,
) -> anyhow::Result<(PtyBus, PathBuf, PathBuf)> {
    let bus = serve_pty(config).await?;
    let file = dir.path().join(format!("{name}.json"));
    calibration.save(&file)?;
    let port = bus.path().to_owned();
    Ok((bus, port, file))
}
