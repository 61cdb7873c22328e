//! AFL++ entry point of the `sasl` target ([`kraftwerk_fuzz::sasl`]). Panics are not caught:
//! `afl::fuzz!` turns them into aborts, which AFL records as crashes.

fn main() {
    afl::fuzz!(|data: &[u8]| kraftwerk_fuzz::sasl::run(data));
}
