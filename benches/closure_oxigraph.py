"""pyoxigraph's transitive closure for `cargo bench --bench closure`: loads N-Triples, then times
SELECT ?x ?y WHERE { ?x <edge>+ ?y } (optionally with LIMIT), iterating every row. Prints JSON."""
import json
import sys
import time

import pyoxigraph

data, edge = sys.argv[1], sys.argv[2]
limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
store = pyoxigraph.Store()
with open(data, "rb") as f:
    store.bulk_load(f, pyoxigraph.RdfFormat.N_TRIPLES)
query = f"SELECT ?x ?y WHERE {{ ?x <{edge}>+ ?y }}" + (f" LIMIT {limit}" if limit else "")
start = time.perf_counter()
rows = sum(1 for _ in store.query(query))
print(json.dumps({"seconds": time.perf_counter() - start, "rows": rows}))
