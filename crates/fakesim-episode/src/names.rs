//! Names that become a file or directory name under the runs directory (run ids, saved-state
//! names, any name a client chooses): one path component of a small safe alphabet, so no name
//! can reach outside the directory it is joined to.

/// Longest name accepted, in bytes.
pub const MAX_NAME_BYTES: usize = 128;

/// How many characters of a refused name a message quotes.
const QUOTE_CHARS: usize = 40;

/// A name refused for use in a path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {quoted} {problem}; use 1 to {MAX_NAME_BYTES} of A-Z a-z 0-9 . _ - (not starting with a dot)")]
pub struct NameError {
    /// What the name names (`run id`, `state name`, ...).
    pub what: &'static str,
    /// A bounded, escaped prefix of the name.
    pub quoted: String,
    /// What is wrong with it.
    pub problem: &'static str,
}

/// Quotes at most a bounded prefix of a client string, escaped, marking a cut.
pub fn bounded_quote(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(QUOTE_CHARS).collect();
    if chars.next().is_some() {
        format!("{head:?}... ({} bytes)", text.len())
    } else {
        format!("{head:?}")
    }
}

/// Accepts `name` as one path component under the runs directory, or says why not.
pub fn check_path_name(what: &'static str, name: &str) -> Result<(), NameError> {
    let problem = if name.is_empty() {
        Some("is empty")
    } else if name.len() > MAX_NAME_BYTES {
        Some("is too long")
    } else if name.contains('\0') {
        Some("contains a NUL byte")
    } else if name.contains(['/', '\\']) {
        Some("contains a path separator")
    } else if name.starts_with('.') {
        Some("starts with a dot (.. and hidden names are refused)")
    } else if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) {
        Some("has a character outside the allowed set")
    } else {
        None
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(NameError {
            what,
            quoted: bounded_quote(name),
            problem,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass() {
        for name in ["before", "run-1", "a.b_c", "0f3a9c1e", &"x".repeat(MAX_NAME_BYTES)] {
            assert_eq!(check_path_name("state name", name), Ok(()), "{name}");
        }
    }

    #[test]
    fn names_that_could_leave_the_directory_are_refused() {
        let megabyte = "a".repeat(1 << 20);
        for (name, problem) in [
            ("..", "starts with a dot"),
            ("../etc", "contains a path separator"),
            ("a/b", "contains a path separator"),
            ("/abs", "contains a path separator"),
            ("a\\b", "contains a path separator"),
            ("nul\0byte", "contains a NUL byte"),
            ("", "is empty"),
            (".hidden", "starts with a dot"),
            ("sp ace", "outside the allowed set"),
            ("é", "outside the allowed set"),
            (megabyte.as_str(), "is too long"),
        ] {
            let error = check_path_name("run id", name).unwrap_err();
            assert!(error.problem.contains(problem), "{name:?}: {error}");
            assert!(
                error.to_string().len() < 300,
                "the message quotes a bounded prefix: {error}"
            );
        }
    }

    #[test]
    fn quotes_are_bounded_and_escaped() {
        assert_eq!(bounded_quote("a\0b"), "\"a\\0b\"");
        let long = bounded_quote(&"z".repeat(5000));
        assert!(long.ends_with("... (5000 bytes)"), "{long}");
        assert!(long.len() < 80);
    }
}
