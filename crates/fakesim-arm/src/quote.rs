//! Client strings quoted back in messages, bounded: a refusal never echoes more than a short,
//! escaped prefix of what a client sent, whatever its length or bytes.

use std::fmt;

/// Characters of a client string quoted back before it is cut.
pub const QUOTED_CHARS: usize = 64;

/// Names of a list quoted back before the rest is only counted.
pub const QUOTED_NAMES: usize = 8;

/// A client string shown as a bounded, escaped, double-quoted prefix.
#[derive(Debug, Clone, Copy)]
pub struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.0;
        let cut = text.char_indices().nth(QUOTED_CHARS).map_or(text.len(), |(at, _)| at);
        f.write_str("\"")?;
        for c in text[..cut].chars() {
            write!(f, "{}", c.escape_debug())?;
        }
        f.write_str("\"")?;
        if cut < text.len() {
            write!(f, "…(+{} bytes)", text.len() - cut)?;
        }
        Ok(())
    }
}

/// A list of client strings: the first [`QUOTED_NAMES`] quoted, the rest counted.
#[derive(Debug, Clone, Copy)]
pub struct QuotedList<'a>(pub &'a [String]);

impl fmt::Display for QuotedList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, name) in self.0.iter().take(QUOTED_NAMES).enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            Quoted(name).fmt(f)?;
        }
        if self.0.len() > QUOTED_NAMES {
            write!(f, ", … {} more", self.0.len() - QUOTED_NAMES)?;
        }
        f.write_str("]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_are_quoted_whole_and_escaped() {
        assert_eq!(Quoted("tcp").to_string(), "\"tcp\"");
        assert_eq!(Quoted("tcp\0").to_string(), "\"tcp\\0\"");
    }

    #[test]
    fn long_names_are_cut_with_the_rest_counted() {
        let long = "é".repeat(20_000);
        let shown = Quoted(&long).to_string();
        assert!(
            shown.starts_with(&format!("\"{}\"", "é".repeat(QUOTED_CHARS))),
            "{shown}"
        );
        assert!(
            shown.ends_with(&format!("…(+{} bytes)", 2 * (20_000 - QUOTED_CHARS))),
            "{shown}"
        );
        assert!(shown.len() < 200);
    }

    #[test]
    fn long_lists_show_a_few_names_and_count_the_rest() {
        let names: Vec<String> = (0..1000).map(|i| format!("j{i}")).collect();
        let shown = QuotedList(&names).to_string();
        assert!(shown.starts_with("[\"j0\", \"j1\""), "{shown}");
        assert!(shown.ends_with(", … 992 more]"), "{shown}");
    }
}
