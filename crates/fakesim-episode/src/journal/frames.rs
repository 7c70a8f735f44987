//! A call's camera frames, named in the journal's order while the caller holds its lock and
//! written later off the async runtime, each through a temporary file so a crash leaves no
//! half-written PNG under a frame's name.

use super::{JournalError, io_at};
use crate::tap::{JournalTap, TapEntry};
use std::fs;
use std::path::PathBuf;
use std::sync::Arc;

/// The files the next frames of a run go to, one per camera.
#[derive(Debug)]
pub struct Frames {
    dir: PathBuf,
    files: Vec<(String, String)>,
    tap: JournalTap,
}

impl Frames {
    /// Frames `files` (camera, file name) in `dir`, handed to `tap` as written.
    pub(super) fn new(dir: PathBuf, files: Vec<(String, String)>, tap: JournalTap) -> Self {
        Frames { dir, files, tap }
    }

    /// Writes one PNG per camera, in the cameras' order. Blocking file work: call it off the
    /// async runtime.
    pub fn write(&self, pngs: &[Vec<u8>]) -> Result<(), JournalError> {
        for ((camera, name), png) in self.files.iter().zip(pngs) {
            let path = self.dir.join(name);
            let partial = self.dir.join(format!("{name}.partial"));
            fs::write(&partial, png).map_err(io_at(&partial))?;
            fs::rename(&partial, &path).map_err(io_at(&path))?;
            self.tap.offer(|| TapEntry::Frame {
                camera: camera.clone(),
                png: Arc::from(png.as_slice()),
            });
        }
        Ok(())
    }
}
