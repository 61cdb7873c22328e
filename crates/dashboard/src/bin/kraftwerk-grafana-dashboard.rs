//! Writes the dashboard to `packaging/grafana/kraftwerk-controllers.json` (or, with `-`, to
//! standard output): `cargo run -p kraftwerk-dashboard [-- -]`.

use std::io::Write;

fn main() -> std::io::Result<()> {
    let json = kraftwerk_dashboard::generate::dashboard_json();
    if std::env::args().nth(1).as_deref() == Some("-") {
        return std::io::stdout().write_all(json.as_bytes());
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../packaging/grafana/kraftwerk-controllers.json"
    );
    std::fs::write(path, json)?;
    eprintln!("wrote {path}");
    Ok(())
}
