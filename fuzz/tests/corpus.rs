//! Every checked-in corpus input replays through its target without a panic: the seeds, and
//! the inputs fuzzing found that once crashed a decoder (kept as `found-*` regression inputs).

use std::path::PathBuf;

use kraftwerk_fuzz::{triage, TARGETS};

#[test]
fn every_corpus_input_replays_without_a_panic() {
    let corpus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut failures = Vec::new();
    for (name, run) in TARGETS {
        let dir = corpus.join(name);
        let result = triage::replay(*run, std::slice::from_ref(&dir)).expect("read the corpus");
        assert!(result.inputs > 0, "{} holds no inputs", dir.display());
        eprintln!(
            "corpus {name}: {} inputs, {} panicked",
            result.inputs,
            result.panicked()
        );
        for (message, inputs) in result.panics {
            failures.push(format!(
                "{name}: {message} ({} inputs, e.g. {})",
                inputs.len(),
                inputs[0].display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "corpus inputs panic:\n{}",
        failures.join("\n")
    );
}
