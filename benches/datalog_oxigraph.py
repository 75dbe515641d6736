"""Naive materialisation with pyoxigraph: every rule as a SPARQL INSERT, repeated until no rule adds a triple.

The reference for `cargo bench --bench datalog` (the "naive SPARQL INSERT-until-fixpoint" baseline of issue 4).
Usage: python3 benches/datalog_oxigraph.py DATA.nt RULES.rq [--dump FILE]
Prints one JSON object: {"load_s", "fixpoint_s", "derived", "passes"}; --dump writes the derived triples as N-Triples.
"""
import json
import re
import sys
import time

import pyoxigraph


def rules(path):
    text = open(path).read()
    parts = re.split(r"^#@rule.*$", text, flags=re.M)
    prologue, bodies = parts[0], parts[1:] or [text]
    for body in bodies:
        # CONSTRUCT { head } WHERE { body }  ->  INSERT { head } WHERE { body }
        yield re.sub(r"^(\s*)CONSTRUCT\b", r"\1INSERT", prologue + body, count=1, flags=re.I | re.M)


def main():
    data, rule_file = sys.argv[1], sys.argv[2]
    dump = sys.argv[sys.argv.index("--dump") + 1] if "--dump" in sys.argv else None
    store = pyoxigraph.Store()
    start = time.perf_counter()
    store.bulk_load(path=data, format=pyoxigraph.RdfFormat.N_TRIPLES)
    load_s = time.perf_counter() - start
    initial = set(store.quads_for_pattern(None, None, None, None)) if dump else None
    before = len(store)
    updates = list(rules(rule_file))
    start = time.perf_counter()
    passes = 0
    while True:
        passes += 1
        size = len(store)
        for u in updates:
            store.update(u)
        if len(store) == size:
            break
    fixpoint_s = time.perf_counter() - start
    if dump:
        with open(dump, "w") as f:
            for q in store.quads_for_pattern(None, None, None, None):
                if q not in initial:
                    f.write(f"{q.subject} {q.predicate} {q.object} .\n")
    print(json.dumps({"load_s": load_s, "fixpoint_s": fixpoint_s, "derived": len(store) - before, "passes": passes}))


if __name__ == "__main__":
    main()
