//! `fuzz-tool`: what the fuzz targets need besides AFL.
//!
//! ```text
//! fuzz-tool replay TARGET PATH...    run every input (files, or directories of them) through
//!                                     TARGET, each in a child process under AFL's memory limit;
//!                                     prints counts per panic message (or abort) and exits 1 if
//!                                     any input failed
//! fuzz-tool replay-one TARGET FILE    one input, uncaught (the child of `replay`)
//! fuzz-tool seed CORPUS_DIR [--rpc-tsv FILE] [--log-dir NAME=DIR]...
//!                                     writes the seed corpora under CORPUS_DIR/<target>/
//! fuzz-tool show-request FILE         prints the frames of a request-stream input as decoded,
//!                                     and each re-encoded body (for triage)
//! ```

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use kraftwerk_fuzz::{seeds, target, triage};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("replay") if args.len() >= 3 => replay(&args[1], &args[2..]),
        Some("replay-one") if args.len() == 3 => {
            let run = target(&args[1]).ok_or_else(|| format!("unknown target {}", args[1]));
            run.and_then(|run| triage::replay_one(run, Path::new(&args[2])).map_err(|e| e.to_string()))
                .map(|()| ExitCode::SUCCESS)
        }
        Some("seed") if args.len() >= 2 => seed(Path::new(&args[1]), &args[2..]),
        Some("show-request") if args.len() == 2 => show_request(Path::new(&args[1])),
        _ => Err("usage: fuzz-tool replay TARGET PATH... | fuzz-tool seed CORPUS_DIR [--rpc-tsv FILE] [--log-dir NAME=DIR]...".into()),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("fuzz-tool: {e}");
            ExitCode::from(2)
        }
    }
}

fn replay(name: &str, paths: &[String]) -> Result<ExitCode, String> {
    target(name).ok_or_else(|| format!("unknown target {name}"))?;
    let paths: Vec<PathBuf> = paths.iter().map(PathBuf::from).collect();
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let result = triage::replay_isolated(&exe, name, &paths).map_err(|e| e.to_string())?;
    println!(
        "replay {name}: {} inputs, {} failed",
        result.inputs,
        result.panicked()
    );
    for (message, inputs) in &result.panics {
        println!("  {:5}  {message}", inputs.len());
        println!("         e.g. {}", inputs[0].display());
    }
    Ok(if result.panicked() == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn seed(corpus: &Path, args: &[String]) -> Result<ExitCode, String> {
    let mut rpc_tsv = None;
    let mut log_dirs = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--rpc-tsv" => rpc_tsv = Some(it.next().ok_or("--rpc-tsv needs a file")?.clone()),
            "--log-dir" => {
                let spec = it.next().ok_or("--log-dir needs NAME=DIR")?;
                let (name, dir) = spec.split_once('=').ok_or("--log-dir needs NAME=DIR")?;
                log_dirs.push((name.to_owned(), PathBuf::from(dir)));
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let write = |target: &str, name: &str, bytes: &[u8]| -> Result<(), String> {
        let dir = corpus.join(target);
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        std::fs::write(dir.join(name), bytes).map_err(|e| format!("{name}: {e}"))
    };
    if let Some(tsv) = rpc_tsv {
        let text = std::fs::read_to_string(&tsv).map_err(|e| format!("{tsv}: {e}"))?;
        for f in seeds::java_requests(&text, 1) {
            let name = format!("java-{}-v{}", f.name, f.version);
            write("request", &name, &f.framed())?;
            let api = kafka_protocol::messages::ApiKey::try_from(f.api_key).ok();
            let is_raft =
                api.is_some_and(|a| kraftwerk_raft::RAFT_APIS.iter().any(|(k, _, _)| *k == a));
            if is_raft {
                let mut script = vec![kraftwerk_fuzz::raft::op::REQUEST];
                script.extend_from_slice(&f.framed());
                write("raft", &name, &script)?;
            } else if api.is_some_and(|a| {
                kraftwerk_controller::CONTROLLER_APIS
                    .iter()
                    .any(|(k, _, _)| *k == a)
            }) || f.name == "Envelope"
            {
                write("controller", &name, &f.framed())?;
            }
        }
    }
    for (name, bytes) in seeds::controller_seeds() {
        write("controller", &name, &bytes)?;
        write("request", &name, &bytes)?;
    }
    for (name, bytes) in seeds::raft_seeds() {
        write("raft", &name, &bytes)?;
    }
    for (name, bytes) in kraftwerk_fuzz::sasl::seeds() {
        write("sasl", &name, &bytes)?;
    }
    let scratch = std::env::temp_dir().join(format!("kraftwerk-fuzz-seed-{}", std::process::id()));
    for (name, bytes) in seeds::log_dir_seeds(&scratch) {
        write("recovery", &name, &bytes)?;
    }
    for (name, dir) in log_dirs {
        let encoded = kraftwerk_fuzz::layout::encode_dir(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?;
        write("recovery", &name, &encoded)?;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(ExitCode::SUCCESS)
}

fn show_request(path: &Path) -> Result<ExitCode, String> {
    use kraftwerk_protocol::codec::{decode_request, encode_request_into};
    let data = std::fs::read(path).map_err(|e| e.to_string())?;
    let mut stream = bytes::BytesMut::from(&data[..]);
    let decoder = kraftwerk_protocol::FrameDecoder::default();
    while let Ok(Some(frame)) = decoder.decode(&mut stream) {
        println!("frame {} bytes: {}", frame.len(), hex(&frame));
        match decode_request(frame, kraftwerk_fuzz::apis::served_table()) {
            Ok(kraftwerk_protocol::InboundRequest::Request(r)) => {
                println!("decoded {:?} v{}: {:#?}", r.api_key, r.version(), r.body);
                let mut out = bytes::BytesMut::new();
                match encode_request_into(&r.header, &r.body, &mut out) {
                    Ok(()) => println!("re-encoded {} bytes: {}", out.len(), hex(&out)),
                    Err(e) => println!("re-encode failed: {e}"),
                }
            }
            other => println!("{other:?}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
