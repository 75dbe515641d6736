#!/usr/bin/env python3
"""A second opinion on SRL outside `cargo test`: every fixture folder with a `rules.srl` and a data file
(`data.ttl` or `data.nt`) is evaluated by reasonctl (`materialize`, the derived facts) and by the `shacl-rules`
package's `srl eval` (a Python SRL engine by one of the draft's editors; it prints the data and the inferred
triples), and the inferred triples are compared as sets (blank nodes aside: the cases have none).

Set-up (the package needs Python >= 3.12):
    python3.13 -m venv /tmp/srlvenv && /tmp/srlvenv/bin/pip install shacl-rules
    cargo build --release
    /tmp/srlvenv/bin/python benches/srl_shacl_rules.py
Exits 1 if a case disagrees or reasonctl fails; a case the other engine cannot run (its data parser, rdflib, reads
no RDF 1.2 syntax) is reported and not compared.
"""
import pathlib
import subprocess
import sys
import tempfile

import rdflib

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "reasonctl"
SRL = pathlib.Path(sys.executable).parent / "srl"


def triples(path, fmt):
    g = rdflib.Graph()
    g.parse(path, format=fmt)
    return set(g)


def main():
    cases = sorted(p.parent for p in ROOT.glob("fixtures/**/rules.srl"))
    bad = 0
    for case in cases:
        data = next((case / n for n in ("data.ttl", "data.nt") if (case / n).is_file()), None)
        if data is None:
            continue
        fmt = "turtle" if data.suffix == ".ttl" else "nt"
        with tempfile.TemporaryDirectory() as tmp:
            ours = pathlib.Path(tmp) / "ours.nt"
            theirs = pathlib.Path(tmp) / "theirs.nt"
            r = subprocess.run([BIN, "materialize", data, "--rules", case / "rules.srl", "--format", "ntriples",
                                "-o", ours], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{case.relative_to(ROOT)}: reasonctl exit {r.returncode}: {r.stderr.strip()[:200]}")
                bad += 1
                continue
            s = subprocess.run([SRL, "eval", case / "rules.srl", data, "-o", theirs, "--output-format", "nt"],
                               capture_output=True, text=True)
            if s.returncode != 0:
                # Not a disagreement: the other engine could not run the case (rdflib reads no RDF 1.2 syntax).
                said = " ".join(s.stdout.split())
                print(f"{case.relative_to(ROOT)}: not compared, srl eval exit {s.returncode}: {said[-240:]}")
                continue
            inferred = triples(theirs, "nt") - triples(data, fmt)
            derived = triples(ours, "nt")
            if inferred == derived:
                print(f"{case.relative_to(ROOT)}: agree ({len(derived)} inferred triples)")
            else:
                bad += 1
                print(f"{case.relative_to(ROOT)}: DISAGREE")
                for t in sorted(inferred - derived):
                    print("  only shacl-rules:", t)
                for t in sorted(derived - inferred):
                    print("  only reasonctl:  ", t)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
