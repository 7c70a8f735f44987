//! `fakesim-hil`: parses the command line and runs the daemon.

use clap::Parser;
use fakesim_hil::cli::Cli;
use fakesim_hil::{Settings, logging, run};
use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    match daemon().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn daemon() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Some(command) = cli.command {
        match command {}
    }
    let settings = Settings::from_args(&cli.daemon)?;
    logging::init(&settings.log_level)?;
    run(settings).await
}
