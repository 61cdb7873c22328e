//! AFL++ entry point of the `request` target ([`kraftwerk_fuzz::request`]). Panics are not caught:
//! `afl::fuzz!` turns them into aborts, which AFL records as crashes.

fn main() {
    afl::fuzz!(|data: &[u8]| kraftwerk_fuzz::request::run(data));
}
