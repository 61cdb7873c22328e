//! The generator of [`super::generated`]: reads the message sources of the kafka-protocol copy
//! that is compiled (`vendor/kafka-protocol/src/messages`, see the workspace `[patch]`) and
//! renders the field version table of every request and response struct, and the api list.
//!
//! `examples/gen_field_tables.rs` writes the files ([`REGENERATE_COMMAND`]); the unit test below
//! renders them in memory and fails while a checked-in file differs. The crate compiles this
//! module only for its tests and the example includes it by path, so it needs std only.

use std::fs;
use std::path::{Path, PathBuf};

mod parse;
mod render;

/// The command that rewrites the generated files.
pub const REGENERATE_COMMAND: &str = "cargo run -p kraftwerk-protocol --example gen_field_tables";

/// One generated file.
pub struct Generated {
    /// Its path relative to the crate root.
    pub path: &'static str,
    /// Its full text.
    pub text: String,
}

/// The directory of the crate's `Cargo.toml`.
pub fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Renders every generated file from the vendored kafka-protocol sources.
pub fn render_all() -> Result<Vec<Generated>, String> {
    let vendored = crate_root().join("../../vendor/kafka-protocol");
    let manifest = vendored.join("Cargo.toml");
    let version = package_version(&read(&manifest)?)
        .ok_or_else(|| format!("{}: no package version", manifest.display()))?;
    let messages = read_messages(&vendored.join("src/messages"))?;
    Ok(vec![
        Generated {
            path: "src/adapt/generated/fields.rs",
            text: render::fields_file(&version, &messages)?,
        },
        Generated {
            path: "src/adapt/generated/apis.rs",
            text: render::apis_file(&version, &messages)?,
        },
    ])
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The `version` of the `[package]` section of a Cargo manifest.
fn package_version(manifest: &str) -> Option<String> {
    manifest
        .lines()
        .skip_while(|l| l.trim() != "[package]")
        .take_while(|l| !l.starts_with('[') || l.trim() == "[package]")
        .find_map(|l| l.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .map(str::to_string)
}

/// Every `*_request.rs` / `*_response.rs` of `dir`, parsed, sorted by file name.
fn read_messages(dir: &Path) -> Result<Vec<render::Message>, String> {
    let entries = fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let is_message = stem.ends_with("_request") || stem.ends_with("_response");
        if is_message && path.extension().is_some_and(|e| e == "rs") {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let structs = parse::parse_message(&read(path)?)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            Ok(render::Message {
                stem: stem.to_string(),
                structs,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_files_are_current() {
        for file in render_all().unwrap() {
            let path = crate_root().join(file.path);
            let checked_in = fs::read_to_string(&path).unwrap_or_default();
            assert!(
                checked_in == file.text,
                "{} is not what the vendored kafka-protocol sources give; regenerate it with \
                 `{REGENERATE_COMMAND}`",
                file.path
            );
        }
    }

    #[test]
    fn package_version_is_read_from_the_package_section() {
        let manifest = "[workspace]\nversion = \"9\"\n[package]\nname = \"x\"\nversion = \"0.18.0\"\n[dependencies.y]\nversion = \"1\"\n";
        assert_eq!(package_version(manifest).as_deref(), Some("0.18.0"));
    }
}
