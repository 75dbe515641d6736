//! The dataflow engine against the in-memory one on one machine: LUBM(`REASONCTL_DATAFLOW_UNIVERSITIES`, default
//! 10) with LUBM_L and LUBM_LE, `--engine memory` and `--engine dataflow --workers 1` / `2`: wall time, peak
//! resident size, and whether the outputs are byte-identical. One run each. The dataflow engine is for capacity;
//! this shows what it costs on one machine. `cargo bench --bench dataflow`.

mod lubm_gen;
mod measure;

use std::path::Path;

fn main() {
    if !measure::benching("dataflow") {
        return;
    }
    let universities: u64 = measure::env_number("REASONCTL_DATAFLOW_UNIVERSITIES", 10);
    let data = lubm_gen::cached(universities);
    let data = data.to_str().unwrap();
    let work = lubm_gen::data_dir();
    println!("LUBM({universities})");
    println!(
        "{:<8} {:<22} {:>8} {:>9} {:>10}",
        "rules", "engine", "wall s", "peak MiB", "identical"
    );
    for set in ["LUBM_L", "LUBM_LE"] {
        let rules =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("benches/lubm-rules/{set}.rq"));
        let rules = rules.to_str().unwrap();
        let reference = work.join(format!("dataflow-{set}-memory.nq"));
        let reference = reference.to_str().unwrap();
        let m = measure::measure(&["materialize", "-q", data, "--rules", rules, "-o", reference]);
        assert_eq!(m.code, 0, "{}", m.stderr);
        println!(
            "{:<8} {:<22} {:>8.2} {:>9.0} {:>10}",
            set, "memory", m.wall, m.peak_mib, "-"
        );
        for workers in ["1", "2"] {
            let out = work.join(format!("dataflow-{set}-{workers}.nq"));
            let out = out.to_str().unwrap();
            let m = measure::measure(&[
                "materialize",
                "-q",
                data,
                "--rules",
                rules,
                "-o",
                out,
                "--engine",
                "dataflow",
                "--workers",
                workers,
            ]);
            assert_eq!(m.code, 0, "{}", m.stderr);
            let same = std::fs::read(out).unwrap() == std::fs::read(reference).unwrap();
            println!(
                "{:<8} {:<22} {:>8.2} {:>9.0} {:>10}",
                set,
                format!("dataflow, {workers} worker(s)"),
                m.wall,
                m.peak_mib,
                if same { "yes" } else { "NO" }
            );
            let _ = std::fs::remove_file(out);
        }
    }
}
