#!/usr/bin/env bash
# Regenerates src/messages*.rs of this copy from a Kafka release's message JSON, with the code
# generator of tychedelia/kafka-protocol-rs (`protocol_codegen`, commit below) driven by
# codegen/main.rs instead of its own main (which clones apache/kafka with git2).
# Usage: vendor/kafka-protocol/codegen/regenerate.sh <kafka-clients jar> <kafka-protocol-rs checkout>
set -euo pipefail
jar=$1 upstream=$2
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && unzip -q "$jar" 'common/message/*.json')
cp -r "$upstream/protocol_codegen" "$work/codegen"
cp "$upstream/Cargo.lock" "$work/codegen/"
cp "$here/codegen/main.rs" "$work/codegen/src/main.rs"
sed -i '/^git2/d' "$work/codegen/Cargo.toml"
echo '[workspace]' >> "$work/codegen/Cargo.toml"
(cd "$work/codegen" && CARGO_TARGET_DIR="$work/target" cargo build --release -q)
"$work/target/release/protocol_codegen" "$work/common/message" "$here/src/messages" | grep -v '^Skipping' || true
cd "$here/../.." && rustfmt --edition 2021 "$here/src/messages.rs" "$here/src/messages/"*.rs
