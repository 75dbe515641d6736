"""Translates a VLog/RDFox LUBM Datalog rule set (TE(s,p,o) triples mapped to predicates RPk, then rules over
RPk) into SPARQL CONSTRUCT rules over the RDF vocabulary itself, one `#@rule` section per Datalog rule.

Usage: python3 benches/lubm-rules/translate.py ../shared/lubm-rules/LUBM_L.dlog > benches/lubm-rules/LUBM_L.rq
"""
import re
import sys

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def atoms(text):
    return [(m.group(1), [a.strip() for a in m.group(2).split(",")]) for m in re.finditer(r"(\w+)\(([^)]*)\)", text)]


def main(path):
    lines = [l.strip() for l in open(path) if l.strip() and not l.startswith("%")]
    views = {}  # RPk -> ("class", iri) | ("property", iri)
    rules = []
    for line in lines:
        head, body = line.split(":-")
        (hname, hargs), = atoms(head)
        batoms = atoms(body)
        if len(batoms) == 1 and batoms[0][0] == "TE":
            s, p, o = batoms[0][1]
            if p == "rdf:type":
                views[hname] = ("class", o.strip("<>"))
            else:
                views[hname] = ("property", p.strip("<>"))
        else:
            rules.append((hname, hargs, batoms))

    def pattern(name, args):
        kind, iri = views[name]
        if kind == "class":
            return f"?{args[0]} <{RDF_TYPE}> <{iri}>"
        return f"?{args[0]} <{iri}> ?{args[1]}"

    print(f"# SPARQL translation of {path.split('/')[-1]} (Apache License 2.0, from karmaresearch/vlog; see NOTICE.md).")
    print("# Each RPk of the Datalog text stands for an RDF class or property; each rule is one CONSTRUCT rule.")
    for i, (hname, hargs, batoms) in enumerate(rules, 1):
        body = " . ".join(pattern(n, a) for n, a in batoms)
        print(f"#@rule r{i:03d}")
        print(f"CONSTRUCT {{ {pattern(hname, hargs)} }} WHERE {{ {body} }}")


if __name__ == "__main__":
    main(sys.argv[1])
