//! Shared by the integration tests: finding ptxas, or skipping visibly when it is missing.

use tilec_lower_ptx::ptxas::Ptxas;

/// The ptxas to validate with. Without one the test is skipped with a message on stderr — unless
/// `TILEC_REQUIRE_PTXAS=1` (as `make test` sets it), in which case a missing ptxas fails the test.
pub fn ptxas_or_skip(test: &str) -> Option<Ptxas> {
    match Ptxas::locate() {
        Ok(p) => Some(p),
        Err(e) => {
            if std::env::var("TILEC_REQUIRE_PTXAS").as_deref() == Ok("1") {
                panic!("{test}: TILEC_REQUIRE_PTXAS=1 but {e}");
            }
            eprintln!("SKIPPED {test}: {e} (run scripts/setup.sh, or set PTXAS)");
            None
        }
    }
}
