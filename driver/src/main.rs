fn main() {
    std::process::exit(tilec::main_with_args(std::env::args().collect()));
}
