//! Plain tables, one row per reading, in the twin's radians: `time_s`, the six goals in force
//! from that reading on, the six measured positions. CSV names its columns `time_s`,
//! `goal.<joint>` and `pos.<joint>` (LeRobot labels, any order); NPY holds a float array of
//! shape (rows, 13) in that order: time, goals in action-key order, positions likewise.

use super::read_error;
use crate::error::IdentifyError;
use crate::recording::Recording;
use fakesim_twin::ArmType;
use fakesim_twin::joints::Joint;
use std::path::Path;

/// Largest table read (bytes).
const MAX_BYTES: u64 = 1 << 30;
/// Columns of a table: time, six goals, six positions.
const COLUMNS: usize = 13;

fn read_bytes(path: &Path) -> Result<Vec<u8>, IdentifyError> {
    let size = std::fs::metadata(path)
        .map_err(|e| read_error(path, e.to_string()))?
        .len();
    if size > MAX_BYTES {
        return Err(read_error(path, format!("{size} bytes, more than {MAX_BYTES}")));
    }
    std::fs::read(path).map_err(|e| read_error(path, e.to_string()))
}

/// A recording from rows of (time, six goals, six positions).
fn from_rows(path: &Path, arm: ArmType, rows: &[[f64; COLUMNS]]) -> Recording {
    let part = |row: &[f64; COLUMNS], at: usize| -> [f64; 6] { std::array::from_fn(|j| row[at + j]) };
    Recording {
        name: path.display().to_string(),
        arm,
        goals: rows.iter().map(|r| (r[0], part(r, 1))).collect(),
        readings: rows.iter().map(|r| (r[0], part(r, 7))).collect(),
        torque: None,
        load: None,
    }
}

/// A CSV cell's text: trimmed, without the double quotes a writer may put round it (R's
/// `write.csv`, Python's `csv.QUOTE_NONNUMERIC`).
fn cell(raw: &str) -> &str {
    let text = raw.trim();
    text.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .map_or(text, str::trim)
}

/// Reads a CSV table with a header row (UTF-8, a byte-order mark at its start allowed, as
/// Excel's "CSV UTF-8" writes one).
pub fn read_csv(path: &Path, arm: ArmType) -> Result<Recording, IdentifyError> {
    let bytes = read_bytes(path)?;
    let text = String::from_utf8(bytes).map_err(|_| read_error(path, "not UTF-8 text".into()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').map(cell).collect();
    let names: Vec<String> = std::iter::once("time_s".to_owned())
        .chain(Joint::ALL.iter().map(|j| format!("goal.{}", j.label())))
        .chain(Joint::ALL.iter().map(|j| format!("pos.{}", j.label())))
        .collect();
    let index: Vec<usize> = names
        .iter()
        .map(|n| {
            header
                .iter()
                .position(|h| h == n)
                .ok_or_else(|| read_error(path, format!("no column {n:?}")))
        })
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    for (line_no, line) in lines.enumerate() {
        let cells: Vec<&str> = line.split(',').map(cell).collect();
        let mut row = [0.0; COLUMNS];
        for (slot, &at) in row.iter_mut().zip(&index) {
            *slot = cells
                .get(at)
                .and_then(|c| c.parse::<f64>().ok())
                .ok_or_else(|| read_error(path, format!("row {}: column {} is not a number", line_no + 2, at + 1)))?;
        }
        rows.push(row);
    }
    Ok(from_rows(path, arm, &rows))
}

/// Reads a little-endian `float64` or `float32` NPY array of shape (rows, 13), C order.
pub fn read_npy(path: &Path, arm: ArmType) -> Result<Recording, IdentifyError> {
    let bytes = read_bytes(path)?;
    let bad = |what: &str| read_error(path, what.to_owned());
    if bytes.get(..6) != Some(b"\x93NUMPY".as_slice()) {
        return Err(bad("not an NPY file"));
    }
    let (len, at) = match bytes.get(6) {
        Some(1) => (
            bytes.get(8..10).map(|b| usize::from(u16::from_le_bytes([b[0], b[1]]))),
            10,
        ),
        Some(2 | 3) => (
            bytes
                .get(8..12)
                .and_then(|b| usize::try_from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])).ok()),
            12,
        ),
        _ => (None, 0),
    };
    let len = len.ok_or_else(|| bad("unknown NPY version"))?;
    let header = bytes
        .get(at..at + len)
        .map(String::from_utf8_lossy)
        .ok_or_else(|| bad("header cut short"))?;
    let width = if header.contains("'<f8'") {
        8
    } else if header.contains("'<f4'") {
        4
    } else {
        return Err(bad("the array is not little-endian float64 or float32"));
    };
    if header.contains("'fortran_order': True") {
        return Err(bad("the array is in Fortran order; save it in C order"));
    }
    let data = &bytes[at + len..];
    let values: Vec<f64> = data
        .chunks_exact(width)
        .map(|c| match c.len() {
            8 => f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
            _ => f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        })
        .collect();
    let shape = format!("({}, {COLUMNS})", values.len() / COLUMNS);
    if !values.len().is_multiple_of(COLUMNS) || !header.replace(' ', "").contains(&shape.replace(' ', "")) {
        return Err(bad(&format!("the array's shape is not (rows, {COLUMNS}): {header}")));
    }
    let rows: Vec<[f64; COLUMNS]> = values
        .chunks_exact(COLUMNS)
        .map(|c| std::array::from_fn(|i| c[i]))
        .collect();
    Ok(from_rows(path, arm, &rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-row table: `time_s` 0.5, the goals 1..6, the positions 7..12; `quote` round every
    /// cell of the header and R's row-name column first when `r`.
    fn table(bom: &str, quote: &str, r: bool) -> String {
        let mut names: Vec<String> = vec!["time_s".into()];
        for kind in ["goal", "pos"] {
            names.extend(Joint::ALL.map(|j| format!("{kind}.{}", j.label())));
        }
        let mut values: Vec<String> = (0..=12).map(|v| format!("{}", f64::from(v).max(0.5))).collect();
        if r {
            names.insert(0, String::new());
            values.insert(0, format!("{quote}1{quote}"));
        }
        let header: Vec<String> = names.iter().map(|n| format!("{quote}{n}{quote}")).collect();
        format!("{bom}{}\r\n{}\r\n", header.join(","), values.join(","))
    }

    #[test]
    fn a_csv_with_a_byte_order_mark_or_quoted_cells_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("table.csv");
        for (bom, quote, r) in [("\u{feff}", "", false), ("", "\"", true), ("\u{feff}", "\"", false)] {
            std::fs::write(&path, table(bom, quote, r)).unwrap();
            let rec = read_csv(&path, ArmType::So101).unwrap_or_else(|e| panic!("{bom:?} {quote:?} {r}: {e}"));
            assert_eq!(rec.goals, vec![(0.5, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])]);
            assert_eq!(rec.readings, vec![(0.5, [7.0, 8.0, 9.0, 10.0, 11.0, 12.0])]);
        }
    }
}
