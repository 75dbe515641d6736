_reasonctl() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="reasonctl"
                ;;
            reasonctl,deps)
                cmd="reasonctl__subcmd__deps"
                ;;
            reasonctl,explain)
                cmd="reasonctl__subcmd__explain"
                ;;
            reasonctl,generate)
                cmd="reasonctl__subcmd__generate"
                ;;
            reasonctl,help)
                cmd="reasonctl__subcmd__help"
                ;;
            reasonctl,lint)
                cmd="reasonctl__subcmd__lint"
                ;;
            reasonctl,materialize)
                cmd="reasonctl__subcmd__materialize"
                ;;
            reasonctl,query)
                cmd="reasonctl__subcmd__query"
                ;;
            reasonctl__subcmd__help,deps)
                cmd="reasonctl__subcmd__help__subcmd__deps"
                ;;
            reasonctl__subcmd__help,explain)
                cmd="reasonctl__subcmd__help__subcmd__explain"
                ;;
            reasonctl__subcmd__help,generate)
                cmd="reasonctl__subcmd__help__subcmd__generate"
                ;;
            reasonctl__subcmd__help,help)
                cmd="reasonctl__subcmd__help__subcmd__help"
                ;;
            reasonctl__subcmd__help,lint)
                cmd="reasonctl__subcmd__help__subcmd__lint"
                ;;
            reasonctl__subcmd__help,materialize)
                cmd="reasonctl__subcmd__help__subcmd__materialize"
                ;;
            reasonctl__subcmd__help,query)
                cmd="reasonctl__subcmd__help__subcmd__query"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        reasonctl)
            opts="-q -h -V --threads --quiet --help --version materialize query lint deps explain generate help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__deps)
            opts="-o -q -h -V --rules --rules-graph --data-format --base --format --state --output --threads --quiet --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --rules)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rules-graph)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data-format)
                    COMPREPLY=($(compgen -W "turtle trig ntriples nquads rdfxml jsonld" -- "${cur}"))
                    return 0
                    ;;
                --base)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json dot" -- "${cur}"))
                    return 0
                    ;;
                --state)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__explain)
            opts="-q -h -V --data-format --base --lenient --fact --depth --format --rules --rules-graph --schedule --no-closure --owl2rl --max-facts --max-memory --max-iterations --stats --state --refresh --timeout --reasoning-time --threads --quiet --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --data-format)
                    COMPREPLY=($(compgen -W "turtle trig ntriples nquads rdfxml jsonld" -- "${cur}"))
                    return 0
                    ;;
                --base)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --fact)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --depth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "text json dot" -- "${cur}"))
                    return 0
                    ;;
                --rules)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rules-graph)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schedule)
                    COMPREPLY=($(compgen -W "staged whole-program naive-stages" -- "${cur}"))
                    return 0
                    ;;
                --max-facts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-memory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-iterations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stats)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reasoning-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__generate)
            opts="-q -h -V --out-dir --threads --quiet --help --version man completions"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --out-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__help)
            opts="materialize query lint deps explain generate help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__help__subcmd__deps)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__help__subcmd__explain)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__help__subcmd__generate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__help__subcmd__lint)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__help__subcmd__materialize)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__help__subcmd__query)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__lint)
            opts="-o -q -h -V --rules --rules-graph --data-format --base --format --deny-warnings --output --engine --threads --quiet --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --rules)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rules-graph)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data-format)
                    COMPREPLY=($(compgen -W "turtle trig ntriples nquads rdfxml jsonld" -- "${cur}"))
                    return 0
                    ;;
                --base)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "human json sarif" -- "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine)
                    COMPREPLY=($(compgen -W "memory dataflow" -- "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__materialize)
            opts="-o -q -h -V --data-format --base --lenient --output --out-dir --compress --format --include-asserted --add --remove --diff --provenance --provenance-graph --engine --workers --processes --process --hosts --rules --rules-graph --schedule --no-closure --owl2rl --max-facts --max-memory --max-iterations --stats --state --refresh --timeout --reasoning-time --threads --quiet --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --data-format)
                    COMPREPLY=($(compgen -W "turtle trig ntriples nquads rdfxml jsonld" -- "${cur}"))
                    return 0
                    ;;
                --base)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --out-dir)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --compress)
                    COMPREPLY=($(compgen -W "gz bz2 xz zst" -- "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "trig nquads turtle ntriples" -- "${cur}"))
                    return 0
                    ;;
                --add)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --remove)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --diff)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --provenance)
                    COMPREPLY=($(compgen -W "rule premises" -- "${cur}"))
                    return 0
                    ;;
                --provenance-graph)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --engine)
                    COMPREPLY=($(compgen -W "memory dataflow" -- "${cur}"))
                    return 0
                    ;;
                --workers)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --processes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --process)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rules)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rules-graph)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schedule)
                    COMPREPLY=($(compgen -W "staged whole-program naive-stages" -- "${cur}"))
                    return 0
                    ;;
                --max-facts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-memory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-iterations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stats)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reasoning-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        reasonctl__subcmd__query)
            opts="-o -q -h -V --query --data-format --base --lenient --format --output --explain-plan --timeout --reasoning-time --rules --rules-graph --schedule --no-closure --owl2rl --max-facts --max-memory --max-iterations --stats --state --refresh --threads --quiet --help --version"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --query)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data-format)
                    COMPREPLY=($(compgen -W "turtle trig ntriples nquads rdfxml jsonld" -- "${cur}"))
                    return 0
                    ;;
                --base)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --format)
                    COMPREPLY=($(compgen -W "table json xml csv tsv nt nquads turtle trig" -- "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --reasoning-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rules)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rules-graph)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --schedule)
                    COMPREPLY=($(compgen -W "staged whole-program naive-stages" -- "${cur}"))
                    return 0
                    ;;
                --max-facts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-memory)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-iterations)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --stats)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --state)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --threads)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _reasonctl -o nosort -o bashdefault -o default reasonctl
else
    complete -F _reasonctl -o bashdefault -o default reasonctl
fi
