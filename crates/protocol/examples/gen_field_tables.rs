//! Regenerates `src/adapt/generated/` (the field version tables and the api list) from the
//! vendored kafka-protocol message sources. Run after upgrading kafka-protocol:
//!
//! ```text
//! cargo run -p kraftwerk-protocol --example gen_field_tables
//! ```
//!
//! The generator lives in `src/adapt/generator/`, where a unit test checks the files are current.

#[path = "../src/adapt/generator/mod.rs"]
mod generator;

fn main() {
    let files = generator::render_all().unwrap_or_else(|e| {
        eprintln!("gen_field_tables: {e}");
        std::process::exit(1);
    });
    for file in files {
        let path = generator::crate_root().join(file.path);
        std::fs::write(&path, &file.text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("wrote {}", path.display());
    }
}
