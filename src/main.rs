//! The `kraftwerk` binary: `run` a controller node, `format` its directories, show their `info`,
//! print a `random-uuid` or the `version` — the jobs of Kafka's `kafka-server-start` and
//! `kafka-storage`.

use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use kraftwerk::cli::{FormatArgs, InfoArgs, RandomUuidArgs, RunArgs, VersionArgs};
use kraftwerk_server::Server;
use tracing::info;

#[derive(Parser)]
#[command(
    name = "kraftwerk",
    version,
    about = "A Kafka KRaft controller",
    after_help = "Environment: KRAFTWERK_LOG (log filter, default info; e.g. \
                  KRAFTWERK_LOG=info,kraftwerk_raft=debug), KRAFTWERK_LOG_FORMAT (text or json). \
                  Metrics: Prometheus text at http://<kraftwerk.metrics.listener>/metrics when \
                  that key is set."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a controller node from a Kafka `server.properties` (`process.roles=controller`),
    /// like `kafka-server-start server.properties [--override key=value]...`.
    Run(RunArgs),
    /// Format this controller's directories (like `kafka-storage format`).
    Format(FormatArgs),
    /// Show what is in this controller's directories (like `kafka-storage info`).
    Info(InfoArgs),
    /// Print a new random cluster id (like `kafka-storage random-uuid`).
    RandomUuid(RandomUuidArgs),
    /// Print kraftwerk's version and the Kafka levels it speaks.
    Version(VersionArgs),
}

fn run(args: &RunArgs) -> anyhow::Result<bool> {
    let path = args.path();
    let config = args
        .load()
        .with_context(|| format!("reading {}", path.display()))?;
    info!(
        "kraftwerk version: {} (Kafka message schemas {})",
        env!("CARGO_PKG_VERSION"),
        kraftwerk_protocol::SCHEMA_KAFKA_VERSION
    );
    info!("{}", config.values_block());
    let formatted = config
        .load_formatted()
        .context("loading the metadata directory")?;
    let listeners: Vec<String> = config
        .served_controller_listeners()
        .iter()
        .map(|l| format!("{}://{}:{}", l.listener_name, l.host, l.port))
        .collect();
    info!(
        node_id = config.node_id,
        listeners = %listeners.join(","),
        voters = %config
            .quorum_voters
            .iter()
            .map(|v| format!("{}@{}:{}", v.id, v.host, v.port))
            .collect::<Vec<_>>()
            .join(","),
        metadata_log_dir = %config.metadata_log_dir.display(),
        overrides = args.overrides.len(),
        "starting controller from {}",
        path.display()
    );
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
    if matches!(cli.command, Command::Run(_)) {
        if let Err(e) = kraftwerk::logging::init_from_env() {
            eprintln!("kraftwerk: {e}");
            return ExitCode::from(1);
        }
    }
    let result = match cli.command {
        Command::Run(args) => run(&args),
        Command::Format(args) => kraftwerk::cli::run_format(&args).map(|_| true),
        Command::Info(args) => kraftwerk::cli::run_info(&args).map_err(anyhow::Error::from),
        Command::RandomUuid(args) => {
            kraftwerk::cli::run_random_uuid(&args);
            Ok(true)
        }
        Command::Version(args) => {
            kraftwerk::cli::run_version(&args);
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
