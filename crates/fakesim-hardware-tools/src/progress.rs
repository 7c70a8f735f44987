//! Progress that updates in place on a terminal and becomes plain lines elsewhere.

use super::Console;

/// A block of status rows redrawn as it changes.
///
/// On a terminal (`live`) the rows are rewritten in place with ANSI escapes; otherwise each
/// change is printed as one line, rows separated by ` | `, and unchanged frames are skipped.
#[derive(Debug, Default)]
pub struct StatusBlock {
    /// Rows currently on screen (live mode) or the last frame printed (log mode).
    shown: Vec<String>,
}

impl StatusBlock {
    /// An empty block; nothing is shown yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Shows `rows` on the console's progress stream if they differ from the last frame.
    pub fn show(&mut self, console: &mut Console, rows: Vec<String>) -> anyhow::Result<()> {
        if let Some(text) = self.frame(rows, console.is_live()) {
            console.progress(&text)?;
        }
        Ok(())
    }

    /// Leaves the block on screen and moves below it (live mode); nothing in log mode.
    pub fn finish(&mut self, console: &mut Console) -> anyhow::Result<()> {
        if console.is_live() && !self.shown.is_empty() {
            console.progress("\n")?;
        }
        self.shown.clear();
        Ok(())
    }

    /// The text that turns the previous frame into `rows`, or `None` when nothing changed.
    fn frame(&mut self, rows: Vec<String>, live: bool) -> Option<String> {
        if rows == self.shown {
            return None;
        }
        let text = if live {
            let mut text = String::from("\r");
            if self.shown.len() > 1 {
                text.push_str(&format!("\x1b[{}A", self.shown.len() - 1));
            }
            let cleared: Vec<String> = rows.iter().map(|row| format!("\x1b[2K{row}")).collect();
            text.push_str(&cleared.join("\n"));
            // Rows left over from a taller previous frame.
            if self.shown.len() > rows.len() {
                text.push_str("\x1b[J");
            }
            text
        } else {
            format!("{}\n", rows.join(" | "))
        };
        self.shown = rows;
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn log_mode_prints_changes_only() {
        let mut block = StatusBlock::new();
        assert_eq!(
            block.frame(rows(&["a 1", "b 2"]), false).as_deref(),
            Some("a 1 | b 2\n")
        );
        assert_eq!(block.frame(rows(&["a 1", "b 2"]), false), None);
        assert_eq!(
            block.frame(rows(&["a 1", "b 3"]), false).as_deref(),
            Some("a 1 | b 3\n")
        );
    }

    #[test]
    fn live_mode_redraws_in_place() {
        let mut block = StatusBlock::new();
        assert_eq!(
            block.frame(rows(&["a", "b"]), true).as_deref(),
            Some("\r\x1b[2Ka\n\x1b[2Kb")
        );
        assert_eq!(
            block.frame(rows(&["c", "d"]), true).as_deref(),
            Some("\r\x1b[1A\x1b[2Kc\n\x1b[2Kd")
        );
        assert_eq!(
            block.frame(rows(&["e"]), true).as_deref(),
            Some("\r\x1b[1A\x1b[2Ke\x1b[J")
        );
    }
}
