
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
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads (default: one per core). Output does not depend on it')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'No progress bars')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('materialize', 'materialize', [CompletionResultType]::ParameterValue, 'Load the data, run the rules to a fixpoint, and write the facts per named graph')
            [CompletionResult]::new('query', 'query', [CompletionResultType]::ParameterValue, 'Run a SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) over the data')
            [CompletionResult]::new('generate', 'generate', [CompletionResultType]::ParameterValue, 'Write the man pages or shell completions (for packagers)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'reasonctl;materialize' {
            [CompletionResult]::new('--data-format', '--data-format', [CompletionResultType]::ParameterName, 'The syntax of every data file, instead of guessing it from the extension (stdin: default nquads)')
            [CompletionResult]::new('--base', '--base', [CompletionResultType]::ParameterName, 'The base IRI relative IRIs resolve against (default: each file''s own file:// IRI)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write to FILE (atomically) instead of stdout; the format follows its extension unless --format is given')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write to FILE (atomically) instead of stdout; the format follows its extension unless --format is given')
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'Write one file per graph into DIR (named after the graph IRI, percent-encoded; graphs.tsv lists them)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output syntax (default: trig on stdout, the extension of -o FILE, turtle in --out-dir)')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads (default: one per core). Output does not depend on it')
            [CompletionResult]::new('--include-asserted', '--include-asserted', [CompletionResultType]::ParameterName, 'Write the asserted facts too, not only the derived ones')
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
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Write the answer to FILE (atomically) instead of stdout')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Write the answer to FILE (atomically) instead of stdout')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Stop the query after SECS seconds (exit 2)')
            [CompletionResult]::new('--reasoning-time', '--reasoning-time', [CompletionResultType]::ParameterName, 'The time NOW() returns, as an xsd:dateTime (e.g. 2026-01-01T00:00:00Z); default: the current time')
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads (default: one per core). Output does not depend on it')
            [CompletionResult]::new('--explain-plan', '--explain-plan', [CompletionResultType]::ParameterName, 'Print the plan, with estimated and actual rows per node, instead of the answer')
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
            [CompletionResult]::new('--threads', '--threads', [CompletionResultType]::ParameterName, 'Worker threads (default: one per core). Output does not depend on it')
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
