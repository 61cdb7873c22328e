use failure::Error;
use std::fs;
use std::path::PathBuf;

pub mod generate_messages;

// Local driver: `protocol_codegen <json dir> <messages output dir>` (no git clone).
fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().collect();
    let json_dir = PathBuf::from(&args[1]);
    let out_dir = fs::canonicalize(&args[2])?;
    for file in fs::read_dir(&out_dir)? {
        let file = file?;
        if file.file_type()?.is_file() && file.path().extension() == Some("rs".as_ref()) {
            fs::remove_file(file.path())?;
        }
    }
    let mut inputs = Vec::new();
    for file in fs::read_dir(&json_dir)? {
        let file = file?;
        if file.file_type()?.is_file() && file.path().extension() == Some("json".as_ref()) {
            inputs.push(file.path());
        }
    }
    generate_messages::run(out_dir.to_str().unwrap(), inputs)?;
    Ok(())
}
