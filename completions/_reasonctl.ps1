
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'reasonctl' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'reasonctl'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'reasonctl' {
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('materialize', 'materialize', [CompletionResultType]::ParameterValue, 'Load the data, run the rules to a fixpoint, and write the facts per named graph')
            [CompletionResult]::new('query', 'query', [CompletionResultType]::ParameterValue, 'Run a SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the data')
            [CompletionResult]::new('lint', 'lint', [CompletionResultType]::ParameterValue, 'Check rules without running them: every rule that cannot run is an error with a code, the rule id, the construct in its source and the fix; likely mistakes are warnings')
            [CompletionResult]::new('deps', 'deps', [CompletionResultType]::ParameterValue, 'Show how rules depend on each other: stages (producers first), recursive groups, negated and aggregated reads; a program that cannot be stratified exits 1 with its cycle')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Explain derived facts: replay the rules whose heads produce them and show the premises each derivation used (asserted or derived facts, paths, absences, aggregate rows), as a tree; --depth N explains derived premises in turn')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Write the man pages or shell completions (for packagers)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reasonctl;materialize' {
            [CompletionResult]::new('--data-format', '--data-format', [CompletionResultType]::ParameterName, 'The syntax of every data file, instead of guessing it from the extension (stdin: default nquads)')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The base IRI relative IRIs resolve against (default: each file''s own file:// IRI)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write to FILE (atomically) instead of stdout; the format follows its extension unless --format is given; a last extension .gz, .bz2, .xz or .zst compresses it (out.nq.gz)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write to FILE (atomically) instead of stdout; the format follows its extension unless --format is given; a last extension .gz, .bz2, .xz or .zst compresses it (out.nq.gz)')
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'Write one file per graph into DIR (named after the graph IRI, percent-encoded; graphs.tsv lists them)')
            [CompletionResult]::new('--compress', '--compress', [CompletionResultType]::ParameterName, 'Compress the output (each file of --out-dir, or stdout); with -o the file''s extension says it')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output syntax (default: trig on stdout, the extension of -o FILE, turtle in --out-dir)')
            [CompletionResult]::new('--add', '--add', [CompletionResultType]::ParameterName, 'With --state and no DATA: add the facts of FILE to the state''s data and maintain the derived facts incrementally, without reading the full data again (repeatable; any data syntax)')
            [CompletionResult]::new('--remove', '--remove', [CompletionResultType]::ParameterName, 'With --state and no DATA: remove the facts of FILE from the state''s data (facts it does not hold are ignored) and maintain the derived facts incrementally (repeatable; applied before --add)')
            [CompletionResult]::new('--diff', '--diff', [CompletionResultType]::ParameterName, 'With --state: write the change to the output since the state (derived facts; asserted ones too with --include-asserted) to FILE as RDF Patch: `D` rows removed, then `A` rows added. `--diff -` writes it to standard output instead of the facts, which are then written only with -o or --out-dir')
            [CompletionResult]::new('--provenance', '--provenance', [CompletionResultType]::ParameterName, 'Write a reifier for every derived fact naming the rule credited with it (`reasonctl:rule`); `premises` adds the premises of that derivation (`reasonctl:premise`). Give it after DATA, or as --provenance=premises')
            [CompletionResult]::new('--provenance-graph', '--provenance-graph', [CompletionResultType]::ParameterName, 'With --provenance: write the provenance into the graph IRI instead of each fact''s own graph')
            [CompletionResult]::new('--engine', '--engine', [CompletionResultType]::ParameterName, 'memory: the planned in-memory executor (the default); dataflow: the program lowered to differential dataflow and run on --workers threads (for capacity; rules it cannot run yet are refused, see docs/scale-out.md)')
            [CompletionResult]::new('--workers', '--workers', [CompletionResultType]::ParameterName, 'With --engine dataflow: the worker threads (default: the machine''s cores)')
            [CompletionResult]::new('--processes', '--processes', [CompletionResultType]::ParameterName, 'With --engine dataflow: run as one of P processes (a cluster; see docs/scale-out.md). Every process is started with the same command line but for --process, and reads its share of DATA; process 0 writes the output, or with --out-dir DIR each process writes its share of the facts into DIR/process-I')
            [CompletionResult]::new('--process', '--process', [CompletionResultType]::ParameterName, 'With --processes: this process''s index, 0 to P-1')
            [CompletionResult]::new('--hosts', '--hosts', [CompletionResultType]::ParameterName, 'With --processes: a file listing every process''s host:port, one per line in process order (`#` comments)')
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file (.rq / .sparql: SPARQL CONSTRUCT rules, several split by `#@rule NAME` lines; .json / .jsonld: one JSON-LD rule or an array; .srl: SHACL 1.2 Rules; .ttl / .trig: SHACL 1.2 Rules'' RDF syntax, see docs/srl.md) or a folder of them; repeatable. Rules stored in the data as f:rule values (typed f:sparql or rdf:JSON) and rule sets in SHACL 1.2 Rules'' RDF syntax are read too')
            [CompletionResult]::new('--rules-graph', '--rules-graph', [CompletionResultType]::ParameterName, 'Take stored f:rule values from this named graph only')
            [CompletionResult]::new('--schedule', '--schedule', [CompletionResultType]::ParameterName, 'staged: dependency stages, semi-naive inside recursive groups; whole-program: every rule whole every pass (the reference evaluation)')
            [CompletionResult]::new('--max-facts', '--max-facts', [CompletionResultType]::ParameterName, 'Stop after deriving N facts (capped, exit 3)')
            [CompletionResult]::new('--max-memory', '--max-memory', [CompletionResultType]::ParameterName, 'Bound the process''s heap to MIB mebibytes in every phase: reasoning stops in time to write what it derived (capped, exit 3); loading, planning or writing past it is stopped (exit 3, nothing written). Without it, the bound is what the machine allows (RAM and swap, or the memory cgroup''s limit; under `ulimit -v`, at most half of the address space left)')
            [CompletionResult]::new('--max-iterations', '--max-iterations', [CompletionResultType]::ParameterName, 'Stop a stage after N passes if its last pass still derived facts (capped, exit 3)')
            [CompletionResult]::new('--stats', '--stats', [CompletionResultType]::ParameterName, 'Write run statistics (derived, capped, capped_reason, capped_rules, pending_rules, stages, rules) as JSON (`-`: to standard output, when the command''s own output goes to a file)')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'A saved materialization in folder DIR: materialize writes it (whole, atomically) after its output; with --state and no DATA, commands answer from it without loading data or running rules. DATA and --rules given with it must be those it was made from (else --refresh)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Bound the whole command to SECS seconds: reasoning stops in time to write what it derived (capped, exit 3); a phase still running at the deadline plus a short grace is stopped (exit 3, nothing written)')
            [CompletionResult]::new('--reasoning-time', '--reasoning-time', [CompletionResultType]::ParameterName, 'The time NOW() returns in rules, as an xsd:dateTime (required when a rule reads the clock)')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it')
            [CompletionResult]::new('--lenient', '--lenient', [CompletionResultType]::ParameterName, 'Trust the data: skip the parsers'' IRI and language-tag validation (about 3x faster on large N-Triples). Invalid data may then load as broken terms instead of failing; syntax errors still fail')
            [CompletionResult]::new('--include-asserted', '--include-asserted', [CompletionResultType]::ParameterName, 'Write the asserted facts too, not only the derived ones')
            [CompletionResult]::new('--no-closure', '--no-closure', [CompletionResultType]::ParameterName, 'Do not compile one-rule transitive-closure groups to property paths: iterate them like any recursive group (for comparison and bisecting)')
            [CompletionResult]::new('--owl2rl', '--owl2rl', [CompletionResultType]::ParameterName, 'Run the OWL 2 RL/RDF rules over the default graph first (owl:sameAs, subclasses and subproperties, domains and ranges, inverse, symmetric, transitive and functional properties, restrictions, property chains, keys …); the rules then run over asserted ⊕ OWL facts. Inconsistent data fails (exit 1)')
            [CompletionResult]::new('--refresh', '--refresh', [CompletionResultType]::ParameterName, 'With --state, DATA and --rules: when they differ from the state''s, run them and replace the state instead of refusing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reasonctl;query' {
            [CompletionResult]::new('--query', '--query', [CompletionResultType]::ParameterName, 'The query: a file holding it, or its text')
            [CompletionResult]::new('--data-format', '--data-format', [CompletionResultType]::ParameterName, 'The syntax of every data file, instead of guessing it from the extension (stdin: default nquads)')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The base IRI for the data and the query (default: each file''s own file:// IRI)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Answer syntax (default: json for SELECT and ASK, nt for CONSTRUCT and DESCRIBE)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the answer to FILE (atomically) instead of stdout; without --format, an extension that names a syntax for the answer (.json .srj .xml .srx .csv .tsv for SELECT and ASK, .nt .nq .ttl .trig for CONSTRUCT and DESCRIBE) picks it, and one for the other kind of answer is refused')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the answer to FILE (atomically) instead of stdout; without --format, an extension that names a syntax for the answer (.json .srj .xml .srx .csv .tsv for SELECT and ASK, .nt .nq .ttl .trig for CONSTRUCT and DESCRIBE) picks it, and one for the other kind of answer is refused')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Bound the whole command to SECS seconds, reasoning and query together (a query past it, or a capped reasoning run, exits 3)')
            [CompletionResult]::new('--reasoning-time', '--reasoning-time', [CompletionResultType]::ParameterName, 'The time NOW() returns, as an xsd:dateTime (e.g. 2026-01-01T00:00:00Z); default: the current time')
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file (.rq / .sparql: SPARQL CONSTRUCT rules, several split by `#@rule NAME` lines; .json / .jsonld: one JSON-LD rule or an array; .srl: SHACL 1.2 Rules; .ttl / .trig: SHACL 1.2 Rules'' RDF syntax, see docs/srl.md) or a folder of them; repeatable. Rules stored in the data as f:rule values (typed f:sparql or rdf:JSON) and rule sets in SHACL 1.2 Rules'' RDF syntax are read too')
            [CompletionResult]::new('--rules-graph', '--rules-graph', [CompletionResultType]::ParameterName, 'Take stored f:rule values from this named graph only')
            [CompletionResult]::new('--schedule', '--schedule', [CompletionResultType]::ParameterName, 'staged: dependency stages, semi-naive inside recursive groups; whole-program: every rule whole every pass (the reference evaluation)')
            [CompletionResult]::new('--max-facts', '--max-facts', [CompletionResultType]::ParameterName, 'Stop after deriving N facts (capped, exit 3)')
            [CompletionResult]::new('--max-memory', '--max-memory', [CompletionResultType]::ParameterName, 'Bound the process''s heap to MIB mebibytes in every phase: reasoning stops in time to write what it derived (capped, exit 3); loading, planning or writing past it is stopped (exit 3, nothing written). Without it, the bound is what the machine allows (RAM and swap, or the memory cgroup''s limit; under `ulimit -v`, at most half of the address space left)')
            [CompletionResult]::new('--max-iterations', '--max-iterations', [CompletionResultType]::ParameterName, 'Stop a stage after N passes if its last pass still derived facts (capped, exit 3)')
            [CompletionResult]::new('--stats', '--stats', [CompletionResultType]::ParameterName, 'Write run statistics (derived, capped, capped_reason, capped_rules, pending_rules, stages, rules) as JSON (`-`: to standard output, when the command''s own output goes to a file)')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'A saved materialization in folder DIR: materialize writes it (whole, atomically) after its output; with --state and no DATA, commands answer from it without loading data or running rules. DATA and --rules given with it must be those it was made from (else --refresh)')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it')
            [CompletionResult]::new('--lenient', '--lenient', [CompletionResultType]::ParameterName, 'Trust the data: skip the parsers'' IRI and language-tag validation (as for materialize)')
            [CompletionResult]::new('--explain-plan', '--explain-plan', [CompletionResultType]::ParameterName, 'Print the plan, with estimated and actual rows per node, instead of the answer')
            [CompletionResult]::new('--no-closure', '--no-closure', [CompletionResultType]::ParameterName, 'Do not compile one-rule transitive-closure groups to property paths: iterate them like any recursive group (for comparison and bisecting)')
            [CompletionResult]::new('--owl2rl', '--owl2rl', [CompletionResultType]::ParameterName, 'Run the OWL 2 RL/RDF rules over the default graph first (owl:sameAs, subclasses and subproperties, domains and ranges, inverse, symmetric, transitive and functional properties, restrictions, property chains, keys …); the rules then run over asserted ⊕ OWL facts. Inconsistent data fails (exit 1)')
            [CompletionResult]::new('--refresh', '--refresh', [CompletionResultType]::ParameterName, 'With --state, DATA and --rules: when they differ from the state''s, run them and replace the state instead of refusing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reasonctl;lint' {
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file or folder (also accepted as FILES); repeatable')
            [CompletionResult]::new('--rules-graph', '--rules-graph', [CompletionResultType]::ParameterName, 'Take stored f:rule values from this named graph only')
            [CompletionResult]::new('--data-format', '--data-format', [CompletionResultType]::ParameterName, 'The syntax of every data file, instead of guessing it from the extension')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The base IRI relative IRIs of the data resolve against (default: each file''s own file:// IRI)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'human: miette''s report (colour on a terminal); json: one object per finding; sarif: SARIF 2.1.0')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the report to FILE (atomically) instead of stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the report to FILE (atomically) instead of stdout')
            [CompletionResult]::new('--engine', '--engine', [CompletionResultType]::ParameterName, 'Also check that the rules run on this engine of `materialize --engine` (dataflow: report what it does not run yet, as errors)')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it')
            [CompletionResult]::new('--deny-warnings', '--deny-warnings', [CompletionResultType]::ParameterName, 'Treat warnings as errors (exit 1)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reasonctl;deps' {
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file (.rq / .sparql, .json / .jsonld) or a folder of them; repeatable')
            [CompletionResult]::new('--rules-graph', '--rules-graph', [CompletionResultType]::ParameterName, 'Take stored f:rule values from this named graph only')
            [CompletionResult]::new('--data-format', '--data-format', [CompletionResultType]::ParameterName, 'The syntax of every data file, instead of guessing it from the extension (stdin: default nquads)')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The base IRI relative IRIs of the data resolve against (default: each file''s own file:// IRI)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'text: stages, groups and edges for a terminal; json: for scripts (see docs/deps.md); dot: Graphviz')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'Show the program a saved materialization (`materialize --state DIR`) was made with')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write to FILE (atomically) instead of stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write to FILE (atomically) instead of stdout')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reasonctl;explain' {
            [CompletionResult]::new('--data-format', '--data-format', [CompletionResultType]::ParameterName, 'The syntax of every data file, instead of guessing it from the extension (stdin: default nquads)')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The base IRI relative IRIs resolve against (default: each file''s own file:// IRI)')
            [CompletionResult]::new('--fact', '--fact', [CompletionResultType]::ParameterName, 'The fact to explain, `S P O [G]` in N-Triples term syntax (prefixed names may use the data''s prefixes; `?x` in any position selects every matching derived fact; blank nodes as materialize writes them, `_:bN`)')
            [CompletionResult]::new('--depth', '--depth', [CompletionResultType]::ParameterName, 'How deep to explain: 1 shows the fact''s own derivations, 2 also those of their derived premises, and so on (at most 10000)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output syntax')
            [CompletionResult]::new('--rules', '--rules', [CompletionResultType]::ParameterName, 'A rules file (.rq / .sparql: SPARQL CONSTRUCT rules, several split by `#@rule NAME` lines; .json / .jsonld: one JSON-LD rule or an array; .srl: SHACL 1.2 Rules; .ttl / .trig: SHACL 1.2 Rules'' RDF syntax, see docs/srl.md) or a folder of them; repeatable. Rules stored in the data as f:rule values (typed f:sparql or rdf:JSON) and rule sets in SHACL 1.2 Rules'' RDF syntax are read too')
            [CompletionResult]::new('--rules-graph', '--rules-graph', [CompletionResultType]::ParameterName, 'Take stored f:rule values from this named graph only')
            [CompletionResult]::new('--schedule', '--schedule', [CompletionResultType]::ParameterName, 'staged: dependency stages, semi-naive inside recursive groups; whole-program: every rule whole every pass (the reference evaluation)')
            [CompletionResult]::new('--max-facts', '--max-facts', [CompletionResultType]::ParameterName, 'Stop after deriving N facts (capped, exit 3)')
            [CompletionResult]::new('--max-memory', '--max-memory', [CompletionResultType]::ParameterName, 'Bound the process''s heap to MIB mebibytes in every phase: reasoning stops in time to write what it derived (capped, exit 3); loading, planning or writing past it is stopped (exit 3, nothing written). Without it, the bound is what the machine allows (RAM and swap, or the memory cgroup''s limit; under `ulimit -v`, at most half of the address space left)')
            [CompletionResult]::new('--max-iterations', '--max-iterations', [CompletionResultType]::ParameterName, 'Stop a stage after N passes if its last pass still derived facts (capped, exit 3)')
            [CompletionResult]::new('--stats', '--stats', [CompletionResultType]::ParameterName, 'Write run statistics (derived, capped, capped_reason, capped_rules, pending_rules, stages, rules) as JSON (`-`: to standard output, when the command''s own output goes to a file)')
            [CompletionResult]::new('--state', '--state', [CompletionResultType]::ParameterName, 'A saved materialization in folder DIR: materialize writes it (whole, atomically) after its output; with --state and no DATA, commands answer from it without loading data or running rules. DATA and --rules given with it must be those it was made from (else --refresh)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Bound the whole command to SECS seconds: a capped materialization explains what was derived, and the explanation stops in time to print what it found, saying it is incomplete')
            [CompletionResult]::new('--reasoning-time', '--reasoning-time', [CompletionResultType]::ParameterName, 'The time NOW() returns in rules, as an xsd:dateTime (required when a rule reads the clock)')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it')
            [CompletionResult]::new('--lenient', '--lenient', [CompletionResultType]::ParameterName, 'Trust the data: skip the parsers'' IRI and language-tag validation (about 3x faster on large N-Triples). Invalid data may then load as broken terms instead of failing; syntax errors still fail')
            [CompletionResult]::new('--no-closure', '--no-closure', [CompletionResultType]::ParameterName, 'Do not compile one-rule transitive-closure groups to property paths: iterate them like any recursive group (for comparison and bisecting)')
            [CompletionResult]::new('--owl2rl', '--owl2rl', [CompletionResultType]::ParameterName, 'Run the OWL 2 RL/RDF rules over the default graph first (owl:sameAs, subclasses and subproperties, domains and ranges, inverse, symmetric, transitive and functional properties, restrictions, property chains, keys …); the rules then run over asserted ⊕ OWL facts. Inconsistent data fails (exit 1)')
            [CompletionResult]::new('--refresh', '--refresh', [CompletionResultType]::ParameterName, 'With --state, DATA and --rules: when they differ from the state''s, run them and replace the state instead of refusing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reasonctl;generate' {
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'Where to write it')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads, 1 to 256 (default: one per core). Output does not depend on it')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            break
        }
        'reasonctl;help' {
            [CompletionResult]::new('materialize', 'materialize', [CompletionResultType]::ParameterValue, 'Load the data, run the rules to a fixpoint, and write the facts per named graph')
            [CompletionResult]::new('query', 'query', [CompletionResultType]::ParameterValue, 'Run a SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the data')
            [CompletionResult]::new('lint', 'lint', [CompletionResultType]::ParameterValue, 'Check rules without running them: every rule that cannot run is an error with a code, the rule id, the construct in its source and the fix; likely mistakes are warnings')
            [CompletionResult]::new('deps', 'deps', [CompletionResultType]::ParameterValue, 'Show how rules depend on each other: stages (producers first), recursive groups, negated and aggregated reads; a program that cannot be stratified exits 1 with its cycle')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Explain derived facts: replay the rules whose heads produce them and show the premises each derivation used (asserted or derived facts, paths, absences, aggregate rows), as a tree; --depth N explains derived premises in turn')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Write the man pages or shell completions (for packagers)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reasonctl;help;materialize' {
            break
        }
        'reasonctl;help;query' {
            break
        }
        'reasonctl;help;lint' {
            break
        }
        'reasonctl;help;deps' {
            break
        }
        'reasonctl;help;explain' {
            break
        }
        'reasonctl;help;generate' {
            break
        }
        'reasonctl;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
