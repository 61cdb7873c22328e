//! AFL++ entry point of the `recovery` target ([`kraftwerk_fuzz::recovery`]). Panics are not caught:
//! `afl::fuzz!` turns them into aborts, which AFL records as crashes.

fn main() {
    afl::fuzz!(|data: &[u8]| kraftwerk_fuzz::recovery::run(data));
}
