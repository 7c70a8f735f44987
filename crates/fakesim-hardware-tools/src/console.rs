//! The terminal a hardware tool talks to: lines typed by the user, results on one stream,
//! progress on another. Tests build one from channels to script the prompts.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, bail};
use tokio::sync::mpsc;

/// Input lines, standard output and standard error of a hardware tool.
pub struct Console {
    /// Lines typed; for stdin, `None` until the first read.
    input: Option<mpsc::UnboundedReceiver<String>>,
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    live: bool,
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

impl Console {
    /// A console on the process's stdin, stdout and stderr; progress is redrawn in place
    /// when stderr is a terminal.
    ///
    /// Stdin is only read once a command asks for a line (a command that never does can run
    /// in the background of a shell), by a detached thread, so a pending read never holds
    /// the process open.
    pub fn stdio() -> Self {
        Self {
            input: None,
            out: Box::new(std::io::stdout()),
            err: Box::new(std::io::stderr()),
            live: std::io::stderr().is_terminal(),
        }
    }

    /// A console on arbitrary streams: `input` yields the lines the user types (closing it is
    /// end of input), `out` gets results and prompts, `err` progress. With `live`, progress is
    /// redrawn in place with terminal escapes; without, every change is a new line.
    pub fn new(
        input: mpsc::UnboundedReceiver<String>,
        out: Box<dyn Write + Send>,
        err: Box<dyn Write + Send>,
        live: bool,
    ) -> Self {
        Self {
            input: Some(input),
            out,
            err,
            live,
        }
    }

    /// Whether progress is redrawn in place.
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// Prints a line on the output stream.
    pub fn say(&mut self, text: &str) -> anyhow::Result<()> {
        writeln!(self.out, "{text}")
            .and_then(|()| self.out.flush())
            .context("writing to standard output")
    }

    /// Writes raw text (no newline added) on the progress stream.
    pub fn progress(&mut self, text: &str) -> anyhow::Result<()> {
        write!(self.err, "{text}")
            .and_then(|()| self.err.flush())
            .context("writing to standard error")
    }

    /// Prints `text` and waits for the user's next line (an empty line is just Enter).
    pub async fn prompt(&mut self, text: &str) -> anyhow::Result<String> {
        self.say(text)?;
        self.read_line(text).await
    }

    /// The next line the user types; `waiting_for` names what it answers, for the error
    /// when input ends first. Cancel-safe (no line is lost when the future is dropped).
    pub async fn read_line(&mut self, waiting_for: &str) -> anyhow::Result<String> {
        let input = self.input.get_or_insert_with(read_stdin);
        match input.recv().await {
            Some(line) => Ok(line),
            None => bail!("input ended while waiting for: {waiting_for}"),
        }
    }
}

/// Starts a thread that forwards stdin line by line.
fn read_stdin() -> mpsc::UnboundedReceiver<String> {
    let (lines, input) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    input
}
