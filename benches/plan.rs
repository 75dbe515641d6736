//! `cargo bench --bench plan`: planning a long join. `reasonctl query` of one basic graph pattern of n triple
//! patterns in a chain (`?x0 :p ?x1 . ?x1 :p ?x2 . …`, n = 1,000, 4,000, 10,000) over 2,000 `:p` edges that
//! share no node (so the answer is empty and the time is the planner's): the median of 3 runs of the release
//! binary (timed by `measure`, to its 2 ms sampling). Skipped outside `cargo bench`. The greedy join order looks at every operand left at each step; this shows how that grows with n.

mod measure;

use std::fmt::Write as _;
use std::fs;

use measure::{benching, measure};

fn main() {
    if !benching("plan") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let data: String = (0..2000).fold(String::new(), |mut s, i| {
        let _ = writeln!(s, "<http://e/a{i}> <http://e/p> <http://e/b{i}> .");
        s
    });
    let (data_path, query_path) = (dir.path().join("d.nt"), dir.path().join("q.rq"));
    fs::write(&data_path, data).expect("write data");
    println!("{:>8} {:>10}", "patterns", "median s");
    for n in [1_000, 4_000, 10_000] {
        let mut query = String::from("SELECT * WHERE {\n");
        for i in 0..n {
            let _ = writeln!(query, "?x{i} <http://e/p> ?x{} .", i + 1);
        }
        query.push_str("}\n");
        fs::write(&query_path, query).expect("write query");
        let args = [
            "query",
            data_path.to_str().expect("a UTF-8 path"),
            "--query",
            query_path.to_str().expect("a UTF-8 path"),
            "--format",
            "tsv",
        ];
        let mut times: Vec<f64> = (0..3)
            .map(|_| {
                let run = measure(&args);
                assert_eq!(run.code, 0, "{}", run.stderr);
                run.wall
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!("{n:>8} {:>10.3}", times[1]);
    }
}
