//! AFL++ entry point of the `raft` target ([`kraftwerk_fuzz::raft`]). Panics are not caught:
//! `afl::fuzz!` turns them into aborts, which AFL records as crashes.

fn main() {
    afl::fuzz!(|data: &[u8]| kraftwerk_fuzz::raft::run(data));
}
