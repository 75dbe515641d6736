//! One program in three rule languages: every `fixtures/srl/<case>/` holds `data.ttl`, the program as SPARQL
//! (`rules.rq`), JSON-LD (`rules.json`) and SRL (`rules.srl`), and `expected.out`; one test per case and language
//! materializes the data with that language's rules and must print `expected.out` (N-Quads) — so the three give
//! identical output, and a test per case checks that each language is there. A case may add the program in SHACL
//! 1.2 Rules' RDF syntax (`rules.ttl`), which must give the same output too.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::{Arguments, Failed, Trial};

const LANGUAGES: [&str; 3] = ["rules.rq", "rules.json", "rules.srl"];

fn cases() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/srl");
    let mut cases: Vec<(String, PathBuf)> = fs::read_dir(root)
        .expect("fixtures/srl")
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    cases.sort();
    cases
}

fn run(dir: &Path, rules: &str) -> Result<(), Failed> {
    let out = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
        .current_dir(dir)
        .args([
            "materialize",
            "data.ttl",
            "--rules",
            rules,
            "--format",
            "nquads",
        ])
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || stderr.contains("panicked") {
        return Err(format!("exit {:?}:\n{stderr}", out.status.code()).into());
    }
    let want = fs::read_to_string(dir.join("expected.out"))?;
    let got = String::from_utf8_lossy(&out.stdout);
    if got != want {
        return Err(format!("output differs:\n--- expected\n{want}\n--- {rules}\n{got}").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for (name, dir) in cases() {
        // SHACL 1.2 Rules' RDF syntax, where the case has it.
        let rdf = dir.join("rules.ttl").is_file().then_some("rules.ttl");
        for rules in LANGUAGES.into_iter().chain(rdf) {
            let dir = dir.clone();
            trials.push(Trial::test(format!("{name}/{rules}"), move || {
                run(&dir, rules)
            }));
        }
        trials.push(Trial::test(
            format!("{name}/has_all_three_languages"),
            move || match LANGUAGES.iter().find(|r| !dir.join(r).is_file()) {
                Some(missing) => Err(format!("{missing} is missing").into()),
                None if fs::read_to_string(dir.join("expected.out"))?
                    .trim()
                    .is_empty() =>
                {
                    Err("expected.out is empty: the comparison would prove nothing".into())
                }
                None => Ok(()),
            },
        ));
    }
    libtest_mimic::run(&args, trials).exit();
}
