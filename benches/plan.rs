//! `cargo bench --bench plan`: planning a long join. `reasonctl query` of one basic graph pattern of n triple
//! patterns in a chain (`?x0 :p ?x1 . ?x1 :p ?x2 . …`, n = 1,000, 4,000, 10,000) over 2,000 `:p` edges that
//! share no node (so the answer is empty and the time is the planner's): the median of 3 runs of the release
//! binary. The greedy join order looks at every operand left at each step; this shows how that grows with n.

use std::fmt::Write as _;
use std::fs;
use std::process::Command;
use std::time::Instant;

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let data: String = (0..2000).fold(String::new(), |mut s, i| {
        let _ = writeln!(s, "<http://e/a{i}> <http://e/p> <http://e/b{i}> .");
        s
    });
    fs::write(dir.path().join("d.nt"), data).expect("write data");
    println!("{:>8} {:>10}", "patterns", "median s");
    for n in [1_000, 4_000, 10_000] {
        let mut query = String::from("SELECT * WHERE {\n");
        for i in 0..n {
            let _ = writeln!(query, "?x{i} <http://e/p> ?x{} .", i + 1);
        }
        query.push_str("}\n");
        fs::write(dir.path().join("q.rq"), query).expect("write query");
        let mut times: Vec<f64> = (0..3)
            .map(|_| {
                let start = Instant::now();
                let out = Command::new(env!("CARGO_BIN_EXE_reasonctl"))
                    .current_dir(dir.path())
                    .args(["query", "d.nt", "--query", "q.rq", "--format", "tsv"])
                    .output()
                    .expect("run reasonctl");
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                start.elapsed().as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!("{n:>8} {:>10.3}", times[1]);
    }
}
