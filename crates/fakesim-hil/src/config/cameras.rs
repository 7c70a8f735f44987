//! Camera profiles given to the daemon: `--camera FILE` (repeatable) and the config file's
//! `[[camera]]` tables (or `camera = ["FILE", ...]`), read into checked profiles.

use anyhow::Context;
use fakesim_twin::CameraProfile;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::path::PathBuf;
use std::str::FromStr;

/// Most bytes a camera profile file may hold (a profile is a dozen short lines).
const MAX_PROFILE_FILE_BYTES: u64 = 64 * 1024;

/// Where one camera profile comes from.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum CameraSource {
    /// A TOML file holding the profile (`--camera FILE`, or a path in the config file).
    File(PathBuf),
    /// The profile itself, a `[[camera]]` table of the config file.
    Table(toml::Table),
}

impl FromStr for CameraSource {
    type Err = Infallible;

    fn from_str(path: &str) -> Result<Self, Self::Err> {
        Ok(CameraSource::File(PathBuf::from(path)))
    }
}

/// Reads and checks every profile, in the order given; errors name the file or the
/// `[[camera]]` entry and the key at fault.
pub fn read_profiles(sources: &[CameraSource]) -> anyhow::Result<Vec<CameraProfile>> {
    sources
        .iter()
        .enumerate()
        .map(|(i, source)| match source {
            CameraSource::Table(table) => Ok(CameraProfile::from_table(
                table,
                &format!("[[camera]] number {} of the config file", i + 1),
            )?),
            CameraSource::File(path) => {
                let origin = path.display().to_string();
                let size = std::fs::metadata(path)
                    .with_context(|| format!("cannot read camera profile {origin}"))?
                    .len();
                anyhow::ensure!(
                    size <= MAX_PROFILE_FILE_BYTES,
                    "camera profile {origin}: {size} bytes, more than a profile's {MAX_PROFILE_FILE_BYTES}"
                );
                let text =
                    std::fs::read_to_string(path).with_context(|| format!("cannot read camera profile {origin}"))?;
                Ok(CameraProfile::from_toml(&text, &origin)?)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_and_tables_are_read_and_bad_ones_named() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("side.toml");
        std::fs::write(
            &good,
            "name = \"side\"\nwidth = 320\nheight = 240\nfovy-deg = 50.0\npos = [0.0, -0.5, 1.0]\nquat = [1.0, 0.0, 0.0, 0.0]\n",
        )
        .unwrap();
        let table: toml::Table =
            toml::from_str(&std::fs::read_to_string(&good).unwrap().replace("side", "top")).unwrap();
        let profiles = read_profiles(&[CameraSource::File(good.clone()), CameraSource::Table(table)]).unwrap();
        let names: Vec<_> = profiles.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["side", "top"]);

        let missing = dir.path().join("nope.toml");
        let error = format!("{:#}", read_profiles(&[CameraSource::File(missing)]).unwrap_err());
        assert!(
            error.contains("cannot read camera profile") && error.contains("nope.toml"),
            "{error}"
        );
        let big = dir.path().join("big.toml");
        std::fs::write(&big, "#".repeat(100_000)).unwrap();
        let error = format!("{:#}", read_profiles(&[CameraSource::File(big)]).unwrap_err());
        assert!(error.contains("more than a profile's"), "{error}");
        let table: toml::Table = toml::from_str("name = \"x\"\nwidth = -1\n").unwrap();
        let error = format!("{:#}", read_profiles(&[CameraSource::Table(table)]).unwrap_err());
        assert!(
            error.contains("[[camera]] number 1 of the config file") && error.contains("width"),
            "{error}"
        );
    }
}
