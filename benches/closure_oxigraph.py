"""pyoxigraph's transitive closure for `cargo bench --bench closure`: loads N-Triples, then times
SELECT ?x ?y WHERE { ?x <edge>+ ?y } (optionally with LIMIT), iterating every row. Prints JSON: seconds and rows,
or an error (8 GiB address-space limit, 300 s time limit)."""
import json
import resource
import signal
import sys
import time

import pyoxigraph

# Bounded, so a closure of billions of pairs cannot take the machine down: 8 GiB of address space, 300 s.
resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
signal.signal(signal.SIGALRM, lambda *_: (print(json.dumps({"error": "time limit (300 s)"})), sys.exit(1)))
signal.alarm(300)

data, edge = sys.argv[1], sys.argv[2]
limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
store = pyoxigraph.Store()
with open(data, "rb") as f:
    store.bulk_load(f, pyoxigraph.RdfFormat.N_TRIPLES)
query = f"SELECT ?x ?y WHERE {{ ?x <{edge}>+ ?y }}" + (f" LIMIT {limit}" if limit else "")
start = time.perf_counter()
try:
    rows = sum(1 for _ in store.query(query))
except MemoryError:
    print(json.dumps({"error": "out of memory (8 GiB limit)"}))
    sys.exit(1)
print(json.dumps({"seconds": time.perf_counter() - start, "rows": rows}))
