//! `kraftwerk-it`: integration scenarios that run kraftwerk controllers (or Apache Kafka's own,
//! per slot) with real Apache Kafka brokers and Kafka's CLI tools on loopback.
//!
//! Usage: `kraftwerk-it --list`, `kraftwerk-it <scenario> [options]`. The last line printed is
//! always `scenario NAME: PASS` or `scenario NAME: FAIL: <reason>`; the exit status is 0 only
//! for PASS. Missing Java, Maven or Kafka jars are failures, never skips.

// The harness is a toolkit for scenarios still to come (mixed quorums, SIGSTOP faults): keep
// its helpers even where no scenario calls them yet.
mod bench;
mod certs;
#[allow(dead_code)]
mod cluster;
#[allow(dead_code)]
mod env;
mod kafka;
#[allow(dead_code)]
mod netns;
mod parse;
#[allow(dead_code)]
mod procs;
mod report;
#[allow(dead_code)]
mod scenarios;
mod util;

use anyhow::{anyhow, Result};
use clap::Parser;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::time::Duration;

use scenarios::SCENARIOS;

#[derive(Parser, Debug)]
#[command(
    name = "kraftwerk-it",
    about = "kraftwerk integration scenarios with real Apache Kafka"
)]
struct Cli {
    /// List the scenarios and exit.
    #[arg(long)]
    list: bool,
    /// Scenario to run (see --list).
    scenario: Option<String>,
    /// Kafka version (brokers, Java controllers, tools); default $KAFKA_VERSION or 4.1.2.
    #[arg(long)]
    kafka_version: Option<String>,
    /// Controller slots, e.g. `java,java,java`; default $IT_CONTROLLERS or kraftwerk x3.
    #[arg(long)]
    controllers: Option<String>,
    /// kraftwerk binary; default $KRAFTWERK_BIN or $CARGO_TARGET_DIR/debug/kraftwerk.
    #[arg(long)]
    kraftwerk_bin: Option<PathBuf>,
    /// `--release-version` used to format; default $IT_RELEASE_VERSION or min(4.1, Kafka's).
    #[arg(long)]
    release_version: Option<String>,
    /// Overall deadline in seconds; default $IT_DEADLINE_S or the scenario's own.
    #[arg(long)]
    deadline_s: Option<u64>,
    /// The scenario's long mode, where it has one (chaos: 5 controllers, 100 faults).
    #[arg(long)]
    long: bool,
}

fn main() {
    let cli = Cli::parse();
    if cli.list {
        for s in SCENARIOS {
            println!(
                "{:<10} {}",
                s.name,
                s.about.split_whitespace().collect::<Vec<_>>().join(" ")
            );
        }
        return;
    }
    let Some(name) = cli.scenario.clone() else {
        eprintln!("usage: kraftwerk-it <scenario> | --list");
        std::process::exit(2);
    };
    report::set_scenario(&name);
    let code = report::finish(run(&name, &cli));
    std::process::exit(code);
}

fn run(name: &str, cli: &Cli) -> Result<()> {
    let scenario = SCENARIOS
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| anyhow!("unknown scenario '{name}' (try --list)"))?;
    let mut opts = env::Options::from_env()?;
    if let Some(v) = &cli.kafka_version {
        opts.kafka_version = v.clone();
    }
    if let Some(c) = &cli.controllers {
        opts.controllers = env::parse_controllers(c)?;
    }
    if let Some(b) = &cli.kraftwerk_bin {
        opts.kraftwerk_bin = b.clone();
    }
    if let Some(r) = &cli.release_version {
        opts.release_version = Some(r.clone());
    }
    opts.long = cli.long;
    // dynamic-mixed and secure-mixed pick their controllers from IT_DYNAMIC_MIXES and
    // IT_SECURE_MIXES, not IT_CONTROLLERS: the run's header and the kraftwerk-binary check
    // follow their mixes.
    if name == "dynamic-mixed" {
        opts.controllers = scenarios::dynamic::mixes()?.concat();
    }
    if name == "secure-mixed" {
        opts.controllers = scenarios::secure::mixes()?.concat();
    }
    let deadline = cli
        .deadline_s
        .or_else(|| {
            std::env::var("IT_DEADLINE_S")
                .ok()
                .and_then(|v| v.parse().ok())
        })
        .map(Duration::from_secs)
        .unwrap_or_else(|| {
            // chaos scales its deadline with the number of faults it plans.
            if name == "chaos" {
                scenarios::chaos::deadline(&opts)
            } else {
                scenario.deadline
            }
        });
    // The demo stops gracefully on Ctrl-C (brokers first), which can take a while.
    let force_after = if name == "demo" {
        Duration::from_secs(90)
    } else {
        Duration::from_secs(20)
    };
    report::set_keep(name == "demo");
    procs::install_signal_handlers(force_after)?;
    if deadline != Duration::MAX {
        report::start_watchdog(deadline);
    }
    let env = env::Env::new(name, &opts)?;
    match catch_unwind(AssertUnwindSafe(|| (scenario.run)(&env))) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(anyhow!("panic: {msg}"))
        }
    }
    .map(|()| {
        if procs::live_count() > 0 {
            procs::signal_all(libc::SIGKILL);
        }
    })
}
