//! AFL++ entry point of the `controller` target ([`kraftwerk_fuzz::controller`]). Panics are not caught:
//! `afl::fuzz!` turns them into aborts, which AFL records as crashes.

fn main() {
    afl::fuzz!(|data: &[u8]| kraftwerk_fuzz::controller::run(data));
}
