//! The dataflow engine against the in-memory one on one machine: LUBM(`REASONCTL_DATAFLOW_UNIVERSITIES`, default
//! 10) with LUBM_L and LUBM_LE, `--engine memory`, `--engine dataflow --workers 1` / `2`, and a cluster of 2
//! processes × 1 worker on loopback: wall time, peak resident size (per process), bytes the processes sent each
//! other (`--stats` `bytes_sent`, summed), and whether the outputs are byte-identical. One run each. The dataflow
//! engine is for capacity; this shows what it costs on one machine. `cargo bench --bench dataflow`
//! (`REASONCTL_DATAFLOW_SETS=LUBM_L` for one rule set; `REASONCTL_DATAFLOW_WORKERS=1` for one process on 1 worker
//! only, empty for none: the cluster alone, beside the in-memory reference).

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
        "{:<8} {:<30} {:>8} {:>9} {:>10} {:>10}",
        "rules", "engine", "wall s", "peak MiB", "sent MiB", "identical"
    );
    // `REASONCTL_DATAFLOW_SETS=LUBM_L` runs one rule set (LUBM(100) with LUBM_LE takes long on 2 cores).
    let sets = std::env::var("REASONCTL_DATAFLOW_SETS").unwrap_or_else(|_| "LUBM_L,LUBM_LE".into());
    for set in sets.split(',').filter(|s| !s.is_empty()) {
        let rules =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("benches/lubm-rules/{set}.rq"));
        let rules = rules.to_str().unwrap();
        let reference = work.join(format!("dataflow-{set}-memory.nq"));
        let reference = reference.to_str().unwrap();
        let m = measure::measure(&["materialize", "-q", data, "--rules", rules, "-o", reference]);
        assert_eq!(m.code, 0, "{}", m.stderr);
        println!(
            "{:<8} {:<30} {:>8.2} {:>9.0} {:>10} {:>10}",
            set, "memory", m.wall, m.peak_mib, "-", "-"
        );
        let worker_counts =
            std::env::var("REASONCTL_DATAFLOW_WORKERS").unwrap_or_else(|_| "1,2".into());
        for workers in worker_counts.split(',').filter(|w| !w.is_empty()) {
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
                "{:<8} {:<30} {:>8.2} {:>9.0} {:>10} {:>10}",
                set,
                format!("dataflow, {workers} worker(s)"),
                m.wall,
                m.peak_mib,
                "-",
                if same { "yes" } else { "NO" }
            );
            let _ = std::fs::remove_file(out);
        }
        // Two processes of one worker each on loopback: process 0 writes the output.
        let out = work.join(format!("dataflow-{set}-cluster.nq"));
        let hosts = work.join("dataflow-hosts");
        let free = || {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().to_string()
        };
        std::fs::write(&hosts, format!("{}\n{}\n", free(), free())).unwrap();
        let stats: Vec<_> = (0..2)
            .map(|i| work.join(format!("dataflow-stats-{i}.json")))
            .collect();
        let args = |i: usize| -> Vec<String> {
            let mut a: Vec<String> = [
                "materialize",
                "-q",
                data,
                "--rules",
                rules,
                "--engine",
                "dataflow",
                "--workers",
                "1",
                "--processes",
                "2",
            ]
            .map(str::to_owned)
            .to_vec();
            a.extend(["--hosts".into(), hosts.display().to_string()]);
            a.extend(["--process".into(), i.to_string()]);
            a.extend(["--stats".into(), stats[i].display().to_string()]);
            if i == 0 {
                a.extend(["-o".into(), out.display().to_string()]);
            }
            a
        };
        let one_args = args(1);
        let one = std::thread::spawn(move || {
            let a: Vec<&str> = one_args.iter().map(String::as_str).collect();
            measure::measure(&a)
        });
        let zero_args = args(0);
        let zero = measure::measure(&zero_args.iter().map(String::as_str).collect::<Vec<_>>());
        let one = one.join().unwrap();
        assert_eq!(zero.code, 0, "{}", zero.stderr);
        assert_eq!(one.code, 0, "{}", one.stderr);
        let sent: f64 = stats
            .iter()
            .map(|p| {
                let json: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
                json["bytes_sent"].as_f64().unwrap_or(0.0)
            })
            .sum();
        let same = std::fs::read(&out).unwrap() == std::fs::read(reference).unwrap();
        println!(
            "{:<8} {:<30} {:>8.2} {:>9} {:>10.0} {:>10}",
            set,
            "dataflow, 2 processes × 1",
            zero.wall.max(one.wall),
            format!("{:.0}+{:.0}", zero.peak_mib, one.peak_mib),
            sent / f64::from(1 << 20),
            if same { "yes" } else { "NO" }
        );
        let _ = std::fs::remove_file(out);
    }
}
