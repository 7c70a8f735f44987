//! A daemon on a virtual SO-101: the emulated bus on a pseudo-terminal, its calibration file in
//! a temporary directory, and the server started on that port.

use crate::TestServer;
use fakesim_hil::Mode as StartMode;
use fakesim_hil::Settings;
use feetech::calibration::Calibration;
use feetech_emu::{EmuConfig, PtyBus, VirtualSo101, serve_pty};
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
        let bus = serve_pty(config).await?;
        let dir = tempfile::tempdir()?;
        let file = dir.path().join("virtual_so101.json");
        calibration.save(&file)?;
        let calibration = file;
        let port = bus.path().to_owned();
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
        self.bus
            .servos()
            .write_log()
            .iter()
            .filter(|w| w.value(&feetech::control_table::GOAL_POSITION).is_some())
            .count()
    }
}
