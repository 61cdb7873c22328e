//! Writes one `quorum-state` file per case of `kraftwerk_log::testing::java_quorum_state_cases`
//! (the states whose bytes Kafka 4.1.2 wrote) into DIR, named `rust-<case>-v<kraft.version>`,
//! for `testdata/QuorumStateCheck.java` (Kafka's `FileQuorumStateStore.readElectionState`) to
//! read back:
//!
//! ```text
//! cargo run -p kraftwerk-log --example export_quorum_state_for_java -- /tmp/rqs
//! java -cp "$KRAFTWERK_KAFKA_LIBS/*" crates/log/testdata/QuorumStateCheck.java read /tmp/rqs/rust-*
//! ```
//!
//! Each file should read as the state printed next to its name. Refuses to run without DIR.

use std::error::Error;
use std::path::PathBuf;

use kraftwerk_log::testing::java_quorum_state_cases;
use kraftwerk_log::FileQuorumStateStore;

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args_os().skip(1);
    let (Some(dir), None) = (args.next().map(PathBuf::from), args.next()) else {
        eprintln!(
            "usage: cargo run -p kraftwerk-log --example export_quorum_state_for_java -- DIR"
        );
        std::process::exit(2);
    };
    std::fs::create_dir_all(&dir)?;
    for (i, (kraft_version, state, _)) in java_quorum_state_cases().into_iter().enumerate() {
        let path = dir.join(format!("rust-{i}-v{kraft_version}"));
        FileQuorumStateStore::with_kraft_version(&path, kraft_version).store(&state)?;
        println!("{} {state:?}", path.display());
    }
    Ok(())
}
