//! A bounded fuzzing run (the long one is `cargo bench --bench fuzz`): structure-aware generators of SPARQL
//! rules, JSON-LD rules, data in every syntax, `--fact` patterns and whole positive programs, each input run by
//! the binary and checked for panics, stack overflows, hangs, undocumented exit codes, output that changes with
//! the thread count, and (programs) staged evaluation that differs from whole-program evaluation.
//! `REASONCTL_FUZZ_CASES` sets the cases per generator (default 12). See: issue 16.

#[path = "fuzz/check.rs"]
mod check;
#[path = "fuzz/generators.rs"]
mod generators;

use proptest::prelude::*;

const BIN: &str = env!("CARGO_BIN_EXE_reasonctl");

fn config() -> ProptestConfig {
    let cases = std::env::var("REASONCTL_FUZZ_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(12);
    ProptestConfig {
        cases,
        // Each case runs the binary several times: shrink for a minute at most.
        max_shrink_time: 60_000,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn sparql_rules_never_crash_and_do_not_depend_on_threads(text in generators::sparql_rules_file()) {
        check::rules(BIN, &text, "rq").map_err(TestCaseError::fail)?;
    }

    #[test]
    fn jsonld_rules_never_crash_and_do_not_depend_on_threads(text in generators::jsonld_rules_file()) {
        check::rules(BIN, &text, "json").map_err(TestCaseError::fail)?;
    }

    #[test]
    fn data_in_every_syntax_never_crashes(file in generators::data_file()) {
        check::data(BIN, &file.0, &file.1).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn fact_patterns_never_crash(fact in generators::fact()) {
        check::fact(BIN, &fact).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn positive_programs_give_the_same_facts_staged_and_naive(
        data in generators::program_data(),
        rules in generators::positive_program(),
    ) {
        check::program(BIN, &data, &rules).map_err(TestCaseError::fail)?;
    }
}
