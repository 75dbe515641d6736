# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_reasonctl_global_optspecs
    string join \n threads= q/quiet h/help V/version
end

function __fish_reasonctl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_reasonctl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_reasonctl_using_subcommand
    set -l cmd (__fish_reasonctl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c reasonctl -n "__fish_reasonctl_needs_command" -l threads -d 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it' -r
complete -c reasonctl -n "__fish_reasonctl_needs_command" -s q -l quiet -d 'No progress bars'
complete -c reasonctl -n "__fish_reasonctl_needs_command" -s h -l help -d 'Print help'
complete -c reasonctl -n "__fish_reasonctl_needs_command" -s V -l version -d 'Print version'
complete -c reasonctl -n "__fish_reasonctl_needs_command" -f -a "materialize" -d 'Load the data, run the rules to a fixpoint, and write the facts per named graph'
complete -c reasonctl -n "__fish_reasonctl_needs_command" -f -a "query" -d 'Run a SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the data'
complete -c reasonctl -n "__fish_reasonctl_needs_command" -f -a "lint" -d 'Check rules without running them: every rule that cannot run is an error with a code, the rule id, the construct in its source and the fix; likely mistakes are warnings'
complete -c reasonctl -n "__fish_reasonctl_needs_command" -f -a "deps" -d 'Show how rules depend on each other: stages (producers first), recursive groups, negated and aggregated reads; a program that cannot be stratified exits 1 with its cycle'
complete -c reasonctl -n "__fish_reasonctl_needs_command" -f -a "explain" -d 'Explain derived facts: replay the rules whose heads produce them and show the premises each derivation used (asserted or derived facts, paths, absences, aggregate rows), as a tree; --depth N explains derived premises in turn'
complete -c reasonctl -n "__fish_reasonctl_needs_command" -f -a "generate" -d 'Write the man pages or shell completions (for packagers)'
complete -c reasonctl -n "__fish_reasonctl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l data-format -d 'The syntax of every data file, instead of guessing it from the extension (stdin: default nquads)' -r -f -a "turtle\t'Turtle (`.ttl`), RDF 1.2'
trig\t'TriG (`.trig`), RDF 1.2'
ntriples\t'N-Triples (`.nt`), RDF 1.2'
nquads\t'N-Quads (`.nq`), RDF 1.2'
rdfxml\t'RDF/XML (`.rdf`, `.owl`, `.xml`)'
jsonld\t'JSON-LD (`.jsonld`)'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l base -d 'The base IRI relative IRIs resolve against (default: each file\'s own file:// IRI)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -s o -l output -d 'Write to FILE (atomically) instead of stdout; the format follows its extension unless --format is given; a last extension .gz, .bz2, .xz or .zst compresses it (out.nq.gz)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l out-dir -d 'Write one file per graph into DIR (named after the graph IRI, percent-encoded; graphs.tsv lists them)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l compress -d 'Compress the output (each file of --out-dir, or stdout); with -o the file\'s extension says it' -r -f -a "gz\t'gzip (`.gz`), concatenated members included'
bz2\t'bzip2 (`.bz2`), concatenated streams included'
xz\t'xz (`.xz`), concatenated streams included'
zst\t'Zstandard (`.zst`), concatenated frames included'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l format -d 'Output syntax (default: trig on stdout, the extension of -o FILE, turtle in --out-dir)' -r -f -a "trig\t'TriG: Turtle with named graphs'
nquads\t'N-Quads: one quad a line'
turtle\t'Turtle: one graph'
ntriples\t'N-Triples: one triple a line, one graph'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l add -d 'With --state and no DATA: add the facts of FILE to the state\'s data and maintain the derived facts incrementally, without reading the full data again (repeatable; any data syntax)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l remove -d 'With --state and no DATA: remove the facts of FILE from the state\'s data (facts it does not hold are ignored) and maintain the derived facts incrementally (repeatable; applied before --add)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l diff -d 'With --state: write the change to the output since the state (derived facts; asserted ones too with --include-asserted) to FILE as RDF Patch: `D` rows removed, then `A` rows added. `--diff -` writes it to standard output instead of the facts, which are then written only with -o or --out-dir' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l provenance -d 'Write a reifier for every derived fact naming the rule credited with it (`reasonctl:rule`); `premises` adds the premises of that derivation (`reasonctl:premise`). Give it after DATA, or as --provenance=premises' -r -f -a "rule\t'The rule credited with each derived fact'
premises\t'The rule, and the premises of its derivation'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l provenance-graph -d 'With --provenance: write the provenance into the graph IRI instead of each fact\'s own graph' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l engine -d 'memory: the planned in-memory executor (the default); dataflow: the program lowered to differential dataflow and run on --workers threads (for capacity; rules it cannot run yet are refused, see docs/scale-out.md)' -r -f -a "memory\t'The planned in-memory executor'
dataflow\t'Differential dataflow on worker threads'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l workers -d 'With --engine dataflow: the worker threads (default: the machine\'s cores)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l processes -d 'With --engine dataflow: run as one of P processes (a cluster; see docs/scale-out.md). Every process is started with the same command line but for --process, and reads its share of DATA; process 0 writes the output, or with --out-dir DIR each process writes its share of the facts into DIR/process-I' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l process -d 'With --processes: this process\'s index, 0 to P-1' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l hosts -d 'With --processes: a file listing every process\'s host:port, one per line in process order (`#` comments)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l rules -d 'A rules file (.rq / .sparql: SPARQL CONSTRUCT rules, several split by `#@rule NAME` lines; .json / .jsonld: one JSON-LD rule or an array; .srl: SHACL 1.2 Rules; .ttl / .trig: SHACL 1.2 Rules\' RDF syntax, see docs/srl.md) or a folder of them; repeatable. Rules stored in the data as f:rule values (typed f:sparql or rdf:JSON) and rule sets in SHACL 1.2 Rules\' RDF syntax are read too' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l rules-graph -d 'Take stored f:rule values from this named graph only' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l schedule -d 'staged: dependency stages, semi-naive inside recursive groups; whole-program: every rule whole every pass (the reference evaluation)' -r -f -a "staged\t'Stages producers first, recursive groups semi-naive'
whole-program\t'All rules, whole bodies, every pass (the naive reference; refuses negation and aggregation)'
naive-stages\t'Stage by stage, whole bodies every pass (the naive reference for negation and aggregation)'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l max-facts -d 'Stop after deriving N facts (capped, exit 3)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l max-memory -d 'Bound the process\'s heap to MIB mebibytes in every phase: reasoning stops in time to write what it derived (capped, exit 3); loading, planning or writing past it is stopped (exit 3, nothing written). Without it, the bound is what the machine allows (RAM and swap, or the memory cgroup\'s limit; under `ulimit -v`, at most half of the address space left)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l max-iterations -d 'Stop a stage after N passes if its last pass still derived facts (capped, exit 3)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l stats -d 'Write run statistics (derived, capped, capped_reason, capped_rules, pending_rules, stages, rules) as JSON (`-`: to standard output, when the command\'s own output goes to a file)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l state -d 'A saved materialization in folder DIR: materialize writes it (whole, atomically) after its output; with --state and no DATA, commands answer from it without loading data or running rules. DATA and --rules given with it must be those it was made from (else --refresh)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l timeout -d 'Bound the whole command to SECS seconds: reasoning stops in time to write what it derived (capped, exit 3); a phase still running at the deadline plus a short grace is stopped (exit 3, nothing written)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l reasoning-time -d 'The time NOW() returns in rules, as an xsd:dateTime (required when a rule reads the clock)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l threads -d 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l lenient -d 'Trust the data: skip the parsers\' IRI and language-tag validation (about 3x faster on large N-Triples). Invalid data may then load as broken terms instead of failing; syntax errors still fail'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l include-asserted -d 'Write the asserted facts too, not only the derived ones'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l no-closure -d 'Do not compile one-rule transitive-closure groups to property paths: iterate them like any recursive group (for comparison and bisecting)'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l owl2rl -d 'Run the OWL 2 RL/RDF rules over the default graph first (owl:sameAs, subclasses and subproperties, domains and ranges, inverse, symmetric, transitive and functional properties, restrictions, property chains, keys …); the rules then run over asserted ⊕ OWL facts. Inconsistent data fails (exit 1)'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -l refresh -d 'With --state, DATA and --rules: when they differ from the state\'s, run them and replace the state instead of refusing'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -s q -l quiet -d 'No progress bars'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand materialize" -s V -l version -d 'Print version'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l query -d 'The query: a file holding it, or its text' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l data-format -d 'The syntax of every data file, instead of guessing it from the extension (stdin: default nquads)' -r -f -a "turtle\t'Turtle (`.ttl`), RDF 1.2'
trig\t'TriG (`.trig`), RDF 1.2'
ntriples\t'N-Triples (`.nt`), RDF 1.2'
nquads\t'N-Quads (`.nq`), RDF 1.2'
rdfxml\t'RDF/XML (`.rdf`, `.owl`, `.xml`)'
jsonld\t'JSON-LD (`.jsonld`)'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l base -d 'The base IRI for the data and the query (default: each file\'s own file:// IRI)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l format -d 'Answer syntax (default: json for SELECT and ASK, nt for CONSTRUCT and DESCRIBE)' -r -f -a "table\t'An aligned text table for people (SELECT, ASK), IRIs compacted with the query\'s prefixes; the default for SELECT and ASK on a terminal'
json\t'SPARQL 1.1 Query Results JSON (SELECT, ASK)'
xml\t'SPARQL Query Results XML (SELECT, ASK)'
csv\t'SPARQL 1.1 Query Results CSV (SELECT, ASK)'
tsv\t'SPARQL 1.1 Query Results TSV (SELECT, ASK)'
nt\t'N-Triples (CONSTRUCT, DESCRIBE)'
nquads\t'N-Quads (CONSTRUCT, DESCRIBE)'
turtle\t'Turtle (CONSTRUCT, DESCRIBE)'
trig\t'TriG (CONSTRUCT, DESCRIBE)'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -s o -l output -d 'Write the answer to FILE (atomically) instead of stdout; without --format, an extension that names a syntax for the answer (.json .srj .xml .srx .csv .tsv for SELECT and ASK, .nt .nq .ttl .trig for CONSTRUCT and DESCRIBE) picks it, and one for the other kind of answer is refused' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l timeout -d 'Bound the whole command to SECS seconds, reasoning and query together (a query past it, or a capped reasoning run, exits 3)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l reasoning-time -d 'The time NOW() returns, as an xsd:dateTime (e.g. 2026-01-01T00:00:00Z); default: the current time' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l rules -d 'A rules file (.rq / .sparql: SPARQL CONSTRUCT rules, several split by `#@rule NAME` lines; .json / .jsonld: one JSON-LD rule or an array; .srl: SHACL 1.2 Rules; .ttl / .trig: SHACL 1.2 Rules\' RDF syntax, see docs/srl.md) or a folder of them; repeatable. Rules stored in the data as f:rule values (typed f:sparql or rdf:JSON) and rule sets in SHACL 1.2 Rules\' RDF syntax are read too' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l rules-graph -d 'Take stored f:rule values from this named graph only' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l schedule -d 'staged: dependency stages, semi-naive inside recursive groups; whole-program: every rule whole every pass (the reference evaluation)' -r -f -a "staged\t'Stages producers first, recursive groups semi-naive'
whole-program\t'All rules, whole bodies, every pass (the naive reference; refuses negation and aggregation)'
naive-stages\t'Stage by stage, whole bodies every pass (the naive reference for negation and aggregation)'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l max-facts -d 'Stop after deriving N facts (capped, exit 3)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l max-memory -d 'Bound the process\'s heap to MIB mebibytes in every phase: reasoning stops in time to write what it derived (capped, exit 3); loading, planning or writing past it is stopped (exit 3, nothing written). Without it, the bound is what the machine allows (RAM and swap, or the memory cgroup\'s limit; under `ulimit -v`, at most half of the address space left)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l max-iterations -d 'Stop a stage after N passes if its last pass still derived facts (capped, exit 3)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l stats -d 'Write run statistics (derived, capped, capped_reason, capped_rules, pending_rules, stages, rules) as JSON (`-`: to standard output, when the command\'s own output goes to a file)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l state -d 'A saved materialization in folder DIR: materialize writes it (whole, atomically) after its output; with --state and no DATA, commands answer from it without loading data or running rules. DATA and --rules given with it must be those it was made from (else --refresh)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l threads -d 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l lenient -d 'Trust the data: skip the parsers\' IRI and language-tag validation (as for materialize)'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l explain-plan -d 'Print the plan, with estimated and actual rows per node, instead of the answer'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l no-closure -d 'Do not compile one-rule transitive-closure groups to property paths: iterate them like any recursive group (for comparison and bisecting)'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l owl2rl -d 'Run the OWL 2 RL/RDF rules over the default graph first (owl:sameAs, subclasses and subproperties, domains and ranges, inverse, symmetric, transitive and functional properties, restrictions, property chains, keys …); the rules then run over asserted ⊕ OWL facts. Inconsistent data fails (exit 1)'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -l refresh -d 'With --state, DATA and --rules: when they differ from the state\'s, run them and replace the state instead of refusing'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -s q -l quiet -d 'No progress bars'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand query" -s V -l version -d 'Print version'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -l rules -d 'A rules file or folder (also accepted as FILES); repeatable' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -l rules-graph -d 'Take stored f:rule values from this named graph only' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -l data-format -d 'The syntax of every data file, instead of guessing it from the extension' -r -f -a "turtle\t'Turtle (`.ttl`), RDF 1.2'
trig\t'TriG (`.trig`), RDF 1.2'
ntriples\t'N-Triples (`.nt`), RDF 1.2'
nquads\t'N-Quads (`.nq`), RDF 1.2'
rdfxml\t'RDF/XML (`.rdf`, `.owl`, `.xml`)'
jsonld\t'JSON-LD (`.jsonld`)'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -l base -d 'The base IRI relative IRIs of the data resolve against (default: each file\'s own file:// IRI)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -l format -d 'human: miette\'s report (colour on a terminal); json: one object per finding; sarif: SARIF 2.1.0' -r -f -a "human\t'miette\'s graphical report (colour on a terminal only)'
json\t'A JSON array, one object per finding'
sarif\t'SARIF 2.1.0 (GitHub code scanning and other SARIF viewers)'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -s o -l output -d 'Write the report to FILE (atomically) instead of stdout' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -l engine -d 'Also check that the rules run on this engine of `materialize --engine` (dataflow: report what it does not run yet, as errors)' -r -f -a "memory\t'The planned in-memory executor'
dataflow\t'Differential dataflow on worker threads'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -l threads -d 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -l deny-warnings -d 'Treat warnings as errors (exit 1)'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -s q -l quiet -d 'No progress bars'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand lint" -s V -l version -d 'Print version'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -l rules -d 'A rules file (.rq / .sparql, .json / .jsonld) or a folder of them; repeatable' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -l rules-graph -d 'Take stored f:rule values from this named graph only' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -l data-format -d 'The syntax of every data file, instead of guessing it from the extension (stdin: default nquads)' -r -f -a "turtle\t'Turtle (`.ttl`), RDF 1.2'
trig\t'TriG (`.trig`), RDF 1.2'
ntriples\t'N-Triples (`.nt`), RDF 1.2'
nquads\t'N-Quads (`.nq`), RDF 1.2'
rdfxml\t'RDF/XML (`.rdf`, `.owl`, `.xml`)'
jsonld\t'JSON-LD (`.jsonld`)'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -l base -d 'The base IRI relative IRIs of the data resolve against (default: each file\'s own file:// IRI)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -l format -d 'text: stages, groups and edges for a terminal; json: for scripts (see docs/deps.md); dot: Graphviz' -r -f -a "text\t'Stages, groups and edges, aligned for a terminal'
json\t'One JSON object (schema in docs/deps.md)'
dot\t'A Graphviz digraph: clusters per stage and recursive group'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -l state -d 'Show the program a saved materialization (`materialize --state DIR`) was made with' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -s o -l output -d 'Write to FILE (atomically) instead of stdout' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -l threads -d 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -s q -l quiet -d 'No progress bars'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand deps" -s V -l version -d 'Print version'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l data-format -d 'The syntax of every data file, instead of guessing it from the extension (stdin: default nquads)' -r -f -a "turtle\t'Turtle (`.ttl`), RDF 1.2'
trig\t'TriG (`.trig`), RDF 1.2'
ntriples\t'N-Triples (`.nt`), RDF 1.2'
nquads\t'N-Quads (`.nq`), RDF 1.2'
rdfxml\t'RDF/XML (`.rdf`, `.owl`, `.xml`)'
jsonld\t'JSON-LD (`.jsonld`)'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l base -d 'The base IRI relative IRIs resolve against (default: each file\'s own file:// IRI)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l fact -d 'The fact to explain, `S P O [G]` in N-Triples term syntax (prefixed names may use the data\'s prefixes; `?x` in any position selects every matching derived fact; blank nodes as materialize writes them, `_:bN`)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l depth -d 'How deep to explain: 1 shows the fact\'s own derivations, 2 also those of their derived premises, and so on (at most 10000)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l format -d 'Output syntax' -r -f -a "text\t'A premise tree (box-drawing characters; colours on a terminal)'
json\t'Every explained fact as a node with its derivations (schema in docs/explain.md)'
dot\t'Graphviz: facts, derivations and premises'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l rules -d 'A rules file (.rq / .sparql: SPARQL CONSTRUCT rules, several split by `#@rule NAME` lines; .json / .jsonld: one JSON-LD rule or an array; .srl: SHACL 1.2 Rules; .ttl / .trig: SHACL 1.2 Rules\' RDF syntax, see docs/srl.md) or a folder of them; repeatable. Rules stored in the data as f:rule values (typed f:sparql or rdf:JSON) and rule sets in SHACL 1.2 Rules\' RDF syntax are read too' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l rules-graph -d 'Take stored f:rule values from this named graph only' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l schedule -d 'staged: dependency stages, semi-naive inside recursive groups; whole-program: every rule whole every pass (the reference evaluation)' -r -f -a "staged\t'Stages producers first, recursive groups semi-naive'
whole-program\t'All rules, whole bodies, every pass (the naive reference; refuses negation and aggregation)'
naive-stages\t'Stage by stage, whole bodies every pass (the naive reference for negation and aggregation)'"
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l max-facts -d 'Stop after deriving N facts (capped, exit 3)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l max-memory -d 'Bound the process\'s heap to MIB mebibytes in every phase: reasoning stops in time to write what it derived (capped, exit 3); loading, planning or writing past it is stopped (exit 3, nothing written). Without it, the bound is what the machine allows (RAM and swap, or the memory cgroup\'s limit; under `ulimit -v`, at most half of the address space left)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l max-iterations -d 'Stop a stage after N passes if its last pass still derived facts (capped, exit 3)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l stats -d 'Write run statistics (derived, capped, capped_reason, capped_rules, pending_rules, stages, rules) as JSON (`-`: to standard output, when the command\'s own output goes to a file)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l state -d 'A saved materialization in folder DIR: materialize writes it (whole, atomically) after its output; with --state and no DATA, commands answer from it without loading data or running rules. DATA and --rules given with it must be those it was made from (else --refresh)' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l timeout -d 'Bound the whole command to SECS seconds: a capped materialization explains what was derived, and the explanation stops in time to print what it found, saying it is incomplete' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l reasoning-time -d 'The time NOW() returns in rules, as an xsd:dateTime (required when a rule reads the clock)' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l threads -d 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l lenient -d 'Trust the data: skip the parsers\' IRI and language-tag validation (about 3x faster on large N-Triples). Invalid data may then load as broken terms instead of failing; syntax errors still fail'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l no-closure -d 'Do not compile one-rule transitive-closure groups to property paths: iterate them like any recursive group (for comparison and bisecting)'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l owl2rl -d 'Run the OWL 2 RL/RDF rules over the default graph first (owl:sameAs, subclasses and subproperties, domains and ranges, inverse, symmetric, transitive and functional properties, restrictions, property chains, keys …); the rules then run over asserted ⊕ OWL facts. Inconsistent data fails (exit 1)'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -l refresh -d 'With --state, DATA and --rules: when they differ from the state\'s, run them and replace the state instead of refusing'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -s q -l quiet -d 'No progress bars'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand explain" -s V -l version -d 'Print version'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand generate" -l out-dir -d 'Where to write it' -r -F
complete -c reasonctl -n "__fish_reasonctl_using_subcommand generate" -l threads -d 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it' -r
complete -c reasonctl -n "__fish_reasonctl_using_subcommand generate" -s q -l quiet -d 'No progress bars'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand generate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand generate" -s V -l version -d 'Print version'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand help; and not __fish_seen_subcommand_from materialize query lint deps explain generate help" -f -a "materialize" -d 'Load the data, run the rules to a fixpoint, and write the facts per named graph'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand help; and not __fish_seen_subcommand_from materialize query lint deps explain generate help" -f -a "query" -d 'Run a SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the data'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand help; and not __fish_seen_subcommand_from materialize query lint deps explain generate help" -f -a "lint" -d 'Check rules without running them: every rule that cannot run is an error with a code, the rule id, the construct in its source and the fix; likely mistakes are warnings'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand help; and not __fish_seen_subcommand_from materialize query lint deps explain generate help" -f -a "deps" -d 'Show how rules depend on each other: stages (producers first), recursive groups, negated and aggregated reads; a program that cannot be stratified exits 1 with its cycle'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand help; and not __fish_seen_subcommand_from materialize query lint deps explain generate help" -f -a "explain" -d 'Explain derived facts: replay the rules whose heads produce them and show the premises each derivation used (asserted or derived facts, paths, absences, aggregate rows), as a tree; --depth N explains derived premises in turn'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand help; and not __fish_seen_subcommand_from materialize query lint deps explain generate help" -f -a "generate" -d 'Write the man pages or shell completions (for packagers)'
complete -c reasonctl -n "__fish_reasonctl_using_subcommand help; and not __fish_seen_subcommand_from materialize query lint deps explain generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
