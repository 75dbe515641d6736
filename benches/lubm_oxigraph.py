"""Runs the LUBM queries with pyoxigraph (in-memory store) for the side-by-side table of `cargo bench --bench lubm`.

Usage: python3 benches/lubm_oxigraph.py DATA.nt QUERY_DIR RUNS
Prints one JSON object: {"load_s": …, "queries": {"q01": {"median_s": …, "rows": …}, …}}.
"""
import json
import pathlib
import statistics
import sys
import time

import pyoxigraph


def main():
    data, query_dir, runs = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3])
    store = pyoxigraph.Store()
    start = time.perf_counter()
    store.bulk_load(path=data, format=pyoxigraph.RdfFormat.N_TRIPLES)
    load_s = time.perf_counter() - start
    out = {"load_s": load_s, "version": pyoxigraph.__version__, "queries": {}}
    for path in sorted(query_dir.glob("*.rq")):
        text = path.read_text()
        rows = len(list(store.query(text)))  # warm-up
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            rows = len(list(store.query(text)))
            times.append(time.perf_counter() - start)
        out["queries"][path.stem] = {"median_s": statistics.median(times), "rows": rows}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
