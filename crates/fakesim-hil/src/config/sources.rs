//! Camera profiles and boards given to the daemon: `--camera FILE` and `--board FILE`
//! (repeatable), and the config file's `[[camera]]` and `[[board]]` tables (or `camera =
//! ["FILE", ...]`), read into checked profiles and boards.

use anyhow::Context;
use fakesim_twin::{Board, CameraProfile};
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Most bytes a camera profile's or a board's file may hold (each is a dozen short lines).
const MAX_PROFILE_FILE_BYTES: u64 = 64 * 1024;

/// Where one camera profile or board comes from.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(untagged)]
pub enum TableSource {
    /// A TOML file holding it (`--camera FILE`, `--board FILE`, or a path in the config file).
    File(PathBuf),
    /// The table itself, a `[[camera]]` or `[[board]]` table of the config file.
    Table(toml::Table),
}

impl FromStr for TableSource {
    type Err = Infallible;

    fn from_str(path: &str) -> Result<Self, Self::Err> {
        Ok(TableSource::File(PathBuf::from(path)))
    }
}

/// Reads and checks every profile, in the order given; errors name the file or the
/// `[[camera]]` entry and the key at fault.
pub fn read_profiles(sources: &[TableSource]) -> anyhow::Result<Vec<CameraProfile>> {
    read_all(sources, "camera profile", "camera", |text, origin, _| {
        Ok(CameraProfile::from_toml(text, origin)?)
    })
}

/// Reads and checks every board, in the order given; a file's relative image path is taken
/// from the file's directory, a config table's from the current directory.
pub fn read_boards(sources: &[TableSource]) -> anyhow::Result<Vec<Board>> {
    read_all(sources, "board", "board", |text, origin, base| {
        Ok(Board::from_toml(text, origin, base)?)
    })
}

/// Parses each source's TOML text with `parse` (given how errors name it and, for a file, its
/// directory); a file larger than [`MAX_PROFILE_FILE_BYTES`] is refused.
fn read_all<T>(
    sources: &[TableSource],
    kind: &str,
    table: &str,
    parse: impl Fn(&str, &str, Option<&Path>) -> anyhow::Result<T>,
) -> anyhow::Result<Vec<T>> {
    sources
        .iter()
        .enumerate()
        .map(|(i, source)| match source {
            TableSource::Table(entry) => {
                let origin = format!("[[{table}]] number {} of the config file", i + 1);
                let text = toml::to_string(entry).with_context(|| format!("{kind} {origin}"))?;
                parse(&text, &origin, None)
            }
            TableSource::File(path) => {
                let origin = path.display().to_string();
                let size = std::fs::metadata(path)
                    .with_context(|| format!("cannot read {kind} {origin}"))?
                    .len();
                anyhow::ensure!(
                    size <= MAX_PROFILE_FILE_BYTES,
                    "{kind} {origin}: {size} bytes, more than the {MAX_PROFILE_FILE_BYTES} a file may hold"
                );
                let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {kind} {origin}"))?;
                parse(&text, &origin, path.parent())
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
        let profiles = read_profiles(&[TableSource::File(good.clone()), TableSource::Table(table)]).unwrap();
        let names: Vec<_> = profiles.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["side", "top"]);

        let missing = dir.path().join("nope.toml");
        let error = format!("{:#}", read_profiles(&[TableSource::File(missing)]).unwrap_err());
        assert!(
            error.contains("cannot read camera profile") && error.contains("nope.toml"),
            "{error}"
        );
        let big = dir.path().join("big.toml");
        std::fs::write(&big, "#".repeat(100_000)).unwrap();
        let error = format!("{:#}", read_profiles(&[TableSource::File(big)]).unwrap_err());
        assert!(error.contains("a file may hold"), "{error}");
        let table: toml::Table = toml::from_str("name = \"x\"\nwidth = -1\n").unwrap();
        let error = format!("{:#}", read_profiles(&[TableSource::Table(table)]).unwrap_err());
        assert!(
            error.contains("[[camera]] number 1 of the config file") && error.contains("width"),
            "{error}"
        );
    }

    #[test]
    fn a_boards_image_is_found_beside_its_file_and_a_tables_as_given() {
        let dir = tempfile::tempdir().unwrap();
        let text = "image = \"board.png\"\nsize = [0.2, 0.1]\npos = [0.0, 0.0, 1.0]\nquat = [1.0, 0.0, 0.0, 0.0]\n";
        let file = dir.path().join("board.toml");
        std::fs::write(&file, text).unwrap();
        let table: toml::Table = toml::from_str(text).unwrap();
        let boards = read_boards(&[TableSource::File(file), TableSource::Table(table)]).unwrap();
        assert_eq!(boards[0].image, dir.path().join("board.png"));
        assert_eq!(boards[1].image, PathBuf::from("board.png"));
        let table: toml::Table = toml::from_str("image = \"b.png\"\nsize = [0.0, 0.1]\n").unwrap();
        let error = format!("{:#}", read_boards(&[TableSource::Table(table)]).unwrap_err());
        assert!(error.contains("[[board]] number 1 of the config file"), "{error}");
    }
}
