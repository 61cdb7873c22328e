# Sourced by .ci/run, scripts/demo, scripts/test and scripts/it: makes sure what building and
# running kraftwerk needs is on the machine, installing it on Debian/Ubuntu when missing, and
# sets the build cache location. Nothing here is specific to CI.
#
#   clang + libclang-dev   RocksDB's bindings are generated with bindgen (needs libclang) and
#                          its C++ is compiled by the `cc` crate
#   java (17+), mvn        Kafka's jars come from Maven Central (scripts/kafka-fetch) and run on
#                          the JVM (brokers, Java controllers, Kafka's CLI tools)
#   cargo                  the Rust toolchain (install it with rustup; not done here), with the
#                          rustfmt and clippy components (added with rustup when missing)
#   promtool               Prometheus's own checker of the /metrics exposition (a crates/server
#                          test runs `promtool check metrics`); `go install`ed into
#                          $KRAFTWERK_TOOLS (needs Go; the first build takes several minutes)
#
# KRAFTWERK_NO_INSTALL=1 reports what is missing instead of installing it.

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kraftwerk/target}"
# Tools built for kraftwerk's checks (promtool); the crates/server metrics test looks here.
# (Not KRAFTWERK_BIN: that names the kraftwerk binary the it/ scenarios run.)
export KRAFTWERK_TOOLS="${KRAFTWERK_TOOLS:-$HOME/.cache/kraftwerk/bin}"
KRAFTWERK_PROMTOOL_VERSION=v0.316.0
# The newest Kafka release kraftwerk is checked against (scripts/test runs compat/ against it as
# well as against $KAFKA_VERSION; .ci/run fetches its jars).
export KRAFTWERK_KAFKA_NEWEST="${KRAFTWERK_KAFKA_NEWEST:-4.4.0}"

# kraftwerk_missing_packages: the Debian packages this machine lacks, space-separated.
kraftwerk_missing_packages() {
    local missing=()
    command -v clang >/dev/null 2>&1 || missing+=(clang)
    dpkg -s libclang-dev >/dev/null 2>&1 || missing+=(libclang-dev)
    command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
    command -v mvn >/dev/null 2>&1 || missing+=(maven)
    echo "${missing[*]}"
}

# kraftwerk_ensure_deps NAME: installs the missing packages (as root, or with sudo), then checks
# that every tool is there. NAME prefixes the messages.
kraftwerk_ensure_deps() {
    local name="$1" missing sudo=""
    missing="$(kraftwerk_missing_packages)"
    if [[ -n "$missing" ]]; then
        if [[ "${KRAFTWERK_NO_INSTALL:-0}" == 1 ]] || ! command -v apt-get >/dev/null 2>&1; then
            echo "$name: missing: $missing (install them, e.g. apt-get install $missing)" >&2
            return 1
        fi
        if [[ "$(id -u)" != 0 ]]; then
            command -v sudo >/dev/null 2>&1 || { echo "$name: missing $missing and not root (no sudo)" >&2; return 1; }
            sudo="sudo"
        fi
        echo "$name: installing $missing (apt-get)" >&2
        export DEBIAN_FRONTEND=noninteractive
        $sudo apt-get update -qq >&2
        $sudo apt-get install -y -qq $missing >&2
    fi
    local tool
    for tool in java mvn cargo clang; do
        command -v "$tool" >/dev/null 2>&1 || { echo "$name: '$tool' is missing and could not be installed" >&2; return 1; }
    done
    # scripts/test checks formatting and lints: rustup's minimal profile lacks both tools.
    local component
    for component in rustfmt clippy; do
        if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
            command -v rustup >/dev/null 2>&1 || { echo "$name: cargo $component is missing (no rustup to add it)" >&2; return 1; }
            echo "$name: rustup component add $component" >&2
            rustup component add "$component" >&2 || return 1
        fi
    done
    # A bare `dpkg -s` does not prove bindgen finds the library: libclang.so must exist.
    if ! compgen -G "/usr/lib/llvm-*/lib/libclang*.so*" >/dev/null && ! compgen -G "/usr/lib/*/libclang*.so*" >/dev/null; then
        echo "$name: libclang.so not found (package libclang-dev); RocksDB's build needs it" >&2
        return 1
    fi
    kraftwerk_ensure_promtool "$name"
}

# kraftwerk_ensure_promtool NAME: makes sure $KRAFTWERK_TOOLS/promtool is Prometheus's promtool
# $KRAFTWERK_PROMTOOL_VERSION, building it with `go install` when it is not (Debian's golang
# is too old for it: Go comes from the machine, e.g. /usr/local/go). NAME prefixes the messages.
kraftwerk_ensure_promtool() {
    local name="$1" promtool="$KRAFTWERK_TOOLS/promtool" go
    # `go install` leaves `promtool --version` blank: a stamp beside it names the version built.
    if [[ -x "$promtool" && "$(cat "$promtool.version" 2>/dev/null)" == "$KRAFTWERK_PROMTOOL_VERSION" ]]; then
        return 0
    fi
    go="$(command -v go || echo /usr/local/go/bin/go)"
    if [[ "${KRAFTWERK_NO_INSTALL:-0}" == 1 ]] || [[ ! -x "$go" ]]; then
        echo "$name: promtool is missing (GOBIN=$KRAFTWERK_TOOLS go install github.com/prometheus/prometheus/cmd/promtool@$KRAFTWERK_PROMTOOL_VERSION)" >&2
        return 1
    fi
    echo "$name: building promtool $KRAFTWERK_PROMTOOL_VERSION (go install; several minutes, once)" >&2
    mkdir -p "$KRAFTWERK_TOOLS"
    GOBIN="$KRAFTWERK_TOOLS" "$go" install "github.com/prometheus/prometheus/cmd/promtool@$KRAFTWERK_PROMTOOL_VERSION" >&2 || return 1
    echo "$KRAFTWERK_PROMTOOL_VERSION" >"$promtool.version"
}

# kraftwerk_build_notice: what a first build costs, printed before cargo starts one.
kraftwerk_build_notice() {
    if [[ ! -d "$CARGO_TARGET_DIR/debug/build" ]] || ! compgen -G "$CARGO_TARGET_DIR/debug/build/librocksdb-sys-*/out" >/dev/null; then
        echo "First build into $CARGO_TARGET_DIR: RocksDB's C++ compiles once (about 15 minutes on 2 cores);" >&2
        echo "later builds reuse it and take seconds to a minute." >&2
    fi
}

# kraftwerk_ensure_afl NAME: makes sure cargo-afl (the AFL++ driver for Rust, scripts/fuzz) is
# installed with AFL++ built for this rustc: `cargo install cargo-afl` builds both from
# crates.io (a few minutes, once per machine). NAME prefixes the messages.
KRAFTWERK_CARGO_AFL_VERSION=0.18.2
kraftwerk_ensure_afl() {
    local name="$1"
    if ! cargo afl --version 2>/dev/null | grep -q "^cargo-afl $KRAFTWERK_CARGO_AFL_VERSION "; then
        if [[ "${KRAFTWERK_NO_INSTALL:-0}" == 1 ]]; then
            echo "$name: cargo-afl $KRAFTWERK_CARGO_AFL_VERSION is missing (cargo install cargo-afl --version $KRAFTWERK_CARGO_AFL_VERSION --locked)" >&2
            return 1
        fi
        echo "$name: installing cargo-afl $KRAFTWERK_CARGO_AFL_VERSION (builds AFL++; a few minutes, once)" >&2
        cargo install -q cargo-afl --version "$KRAFTWERK_CARGO_AFL_VERSION" --locked >&2 || return 1
    fi
    # AFL++ and its runtime are built per rustc version; a new toolchain needs a rebuild.
    if ! cargo afl --version 2>/dev/null | grep -q "AFL++ version"; then
        echo "$name: building AFL++ for $(rustc --version)" >&2
        cargo afl config --build --force >&2 || return 1
    fi
}
