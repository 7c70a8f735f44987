//! `fakesim-hil-daemon` (started as `fakesim-hil` by the launcher beside it): parses the command
//! line and runs the daemon, one of the hardware tools or `install-service`.

mod cli;
mod identify;
mod service;

use cli::{Cli, Command};
use fakesim_hardware_tools::{self as hardware_tools, Console};
use fakesim_hil::{Settings, config, logging, run};
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
    let cli = Cli::from_env();
    if let Some(command) = cli.command {
        let level = match &command {
            Command::Mcp(args) => args.twin.log_level.as_deref(),
            _ => cli.daemon.twin.log_level.as_deref(),
        };
        logging::init(level.unwrap_or("warn"))?;
        return match command {
            Command::Scan(args) => hardware_tools::scan::run(args, Console::stdio()).await,
            Command::SetupIds(args) => hardware_tools::setup_ids::run(args, Console::stdio()).await,
            Command::Calibrate(args) => hardware_tools::calibrate::run(args, Console::stdio()).await,
            Command::Align(args) => hardware_tools::align::run(args, Console::stdio()).await,
            Command::Emulate(args) => hardware_tools::emulate::run(*args, Console::stdio()).await,
            Command::Teleop(args) => hardware_tools::teleop::run(args, Console::stdio()).await,
            Command::Identify(args) => identify::run(*args).await,
            Command::Mcp(args) => fakesim_hil::mcp_stdio(*args).await,
            Command::InstallService(args) => service::run(&args),
            Command::ConfigTable => {
                print!("{}", config::markdown());
                Ok(())
            }
        };
    }
    let settings = Settings::from_cli(&cli.daemon, |name| std::env::var(name).ok())?;
    logging::init(&settings.log_level)?;
    run(settings).await
}
