//! The `kraftwerk` binary: `run` a controller node, `format` its directories, or print a
//! `random-uuid` — the same jobs as Kafka's `kafka-server-start` and `kafka-storage`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use kraftwerk::cli::{FormatArgs, RandomUuidArgs};
use kraftwerk::config::NodeConfig;
use kraftwerk_server::Server;

#[derive(Parser)]
#[command(name = "kraftwerk", version, about = "A Kafka KRaft controller")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a controller node from a Kafka `server.properties` (`process.roles=controller`).
    Run {
        /// Path to the properties file.
        #[arg(short, long)]
        config: PathBuf,
    },
    /// Format this controller's directories (like `kafka-storage format`).
    Format(FormatArgs),
    /// Print a new random cluster id (like `kafka-storage random-uuid`).
    RandomUuid(RandomUuidArgs),
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("KRAFTWERK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

fn run(config_path: PathBuf) -> anyhow::Result<bool> {
    let config = NodeConfig::load(&config_path)
        .with_context(|| format!("reading {}", config_path.display()))?;
    let formatted = config
        .load_formatted()
        .context("loading the metadata directory")?;
    let server_config = config.server_config(&formatted);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("kraftwerk-net")
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    runtime.block_on(async move {
        let server = Server::start(server_config).await?;
        Ok(server.run_until_signal().await)
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(cli.command, Command::Run { .. }) {
        init_logging();
    }
    let result = match cli.command {
        Command::Run { config } => run(config),
        Command::Format(args) => kraftwerk::cli::run_format(&args).map(|_| true),
        Command::RandomUuid(args) => {
            kraftwerk::cli::run_random_uuid(&args);
            Ok(true)
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("kraftwerk: {e:#}");
            ExitCode::from(1)
        }
    }
}
