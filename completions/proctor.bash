# bash completion for proctor(1): its commands, the options each takes, and
# their values (modes, themes, model kinds, files and directories). Needs
# bash only; installed as share/bash-completion/completions/proctor.

# The bundled themes are found from where this file is: installed
# (PREFIX/share/bash-completion/completions -> PREFIX/share/proctor/themes)
# or in a checkout (completions/ -> themes/).
_proctor_here=${BASH_SOURCE[0]%/*}

_proctor_opts_exec="--mode --workspace --workspace-mode --memory --cpu-time --timeout --pids
        --tmpfs --output-limit --disk --image --image-max --runtime --json --raw --config --help"
_proctor_opts_session="--max-parallel --memory-budget --model --base-url --ca-cert --max-iterations --trace
        --mcp-config --approval --allow --deny --resume"
_proctor_opts_screen="--theme --no-color --no-bell"

# Options followed by a value; the rest are flags.
_proctor_takes_value()
{
        case $1 in
        --mode | --workspace | --workspace-mode | --memory | --cpu-time | --timeout | --pids | \
                --tmpfs | --output-limit | --disk | --config | --max-parallel | --memory-budget | \
                --model | --base-url | --ca-cert | --max-iterations | --trace | --theme | --speed | --mcp-config | \
                --image | --image-max | --runtime | --approval | --allow | --deny | --resume)
                return 0 ;;
        esac
        return 1
}

# the ids of the recorded sessions, then trace files
_proctor_sessions()
{
        local f
        for f in "${XDG_STATE_HOME:-$HOME/.local/state}"/proctor/sessions/*.jsonl; do
                [ -e "$f" ] || continue
                f=${f##*/}
                echo "${f%.jsonl}"
        done
}

_proctor_themes()
{
        local d f
        echo default
        for d in "${XDG_CONFIG_HOME:-$HOME/.config}/proctor/themes" "${PROCTOR_THEMES_DIR:-}" \
                "$_proctor_here/../../proctor/themes" "$_proctor_here/../themes" \
                /usr/local/share/proctor/themes \
                /usr/share/proctor/themes; do
                [ -n "$d" ] && [ -d "$d" ] || continue
                for f in "$d"/*.theme; do
                        [ -e "$f" ] || continue
                        f=${f##*/}
                        echo "${f%.theme}"
                done
        done
}

# _proctor_values OPTION VALUE: the candidates for VALUE, whole, one a line
_proctor_values()
{
        local cur=$2
        case $1 in
        --mode) compgen -W "local sandbox" -- "$cur" ;;
        --approval) compgen -W "host always never" -- "$cur" ;;
        --runtime) compgen -W "native docker" -- "$cur" ;;
        --workspace-mode) compgen -W "rw ro overlay none" -- "$cur" ;;
        --workspace) compgen -d -- "$cur" ;;
        --config | --trace | --mcp-config | --image) compgen -f -- "$cur" ;;
        --theme)
                case $cur in
                */*) compgen -f -- "$cur" ;;
                *) compgen -W "$(_proctor_themes | sort -u)" -- "$cur" ;;
                esac ;;
        --model)
                case $cur in
                script:*) compgen -f -- "${cur#script:}" | sed 's/^/script:/' ;;
                *) compgen -W "demo script: openai:" -- "$cur" ;;
                esac ;;
        --speed) compgen -W "1 2 4 10 max" -- "$cur" ;;
        --resume) compgen -W "$(_proctor_sessions)" -- "$cur"; compgen -f -- "$cur" ;;
        esac
}

# _proctor_words: the words proctor will see up to the cursor, into w[]:
# bash splits --mode=lo and script:FILE at '=' and ':' (COMP_WORDBREAKS).
_proctor_words()
{
        local i word glue=0
        w=()
        for ((i = 0; i <= COMP_CWORD; i++)); do
                word=${COMP_WORDS[i]}
                if [[ $word =~ ^[=:]+$ ]] && [ ${#w[@]} -gt 0 ]; then
                        w[${#w[@]} - 1]+=$word
                        glue=1
                elif [ $glue -eq 1 ]; then
                        w[${#w[@]} - 1]+=$word
                        glue=0
                else
                        w+=("$word")
                fi
        done
}

# _proctor_candidates: what may complete the last word of w[], whole
_proctor_candidates()
{
        local n=${#w[@]} cur prev cmd opts
        cur=${w[n - 1]}
        prev=${w[n - 2]:-}
        cmd=${w[1]:-}
        [ "$n" -gt 2 ] || cmd=""
        if [[ $cur == --*=* ]]; then
                _proctor_values "${cur%%=*}" "${cur#*=}" | sed "s|^|${cur%%=*}=|"
                return
        fi
        if _proctor_takes_value "$prev"; then
                _proctor_values "$prev" "$cur"
                return
        fi
        if [ "$cmd" = exec ] && [[ " ${w[*]:2:n-3} " == *" -- "* ]]; then
                if [ "$prev" = -- ]; then compgen -c -- "$cur" | sort -u; else compgen -f -- "$cur"; fi
                return
        fi
        if [ "$n" -eq 2 ] && [[ $cur != -* ]]; then
                compgen -W "run resume exec replay doctor mcp images ls attach" -- "$cur"
                return
        fi
        case $cmd in
        run) opts="$_proctor_opts_exec $_proctor_opts_session" ;;
        exec) opts="$_proctor_opts_exec --" ;;
        replay) opts="--speed --summary --config --help $_proctor_opts_screen" ;;
        resume) [ "$n" -eq 3 ] && [[ $cur != -* ]] && { _proctor_values --resume "$cur"; return; }
                opts="$_proctor_opts_exec $_proctor_opts_session $_proctor_opts_screen" ;;
        doctor | ls) opts="--json --help" ;;
        attach) opts="--read-only --config --help $_proctor_opts_screen" ;;
        images) [ "$n" -eq 3 ] && [[ $cur != -* ]] && { compgen -W "prune" -- "$cur"; return; }
                opts="--help" ;;
        mcp) [ "$n" -eq 3 ] && [[ $cur != -* ]] && { compgen -W "list" -- "$cur"; return; }
                opts="$_proctor_opts_exec --mcp-config" ;;
        *) opts="$_proctor_opts_exec $_proctor_opts_session $_proctor_opts_screen" ;;
        esac
        [ "$n" -eq 2 ] && opts="$opts --version"
        if [[ $cur == -* ]]; then
                compgen -W "$opts" -- "$cur"
        elif [ "$cmd" = replay ]; then
                compgen -f -- "$cur" # the trace
        fi
}

_proctor()
{
        local -a w
        local cur strip c
        _proctor_words
        cur=${w[${#w[@]} - 1]}
        # readline replaces only what follows the last '=' or ':' of the word
        strip=""
        [[ $cur == *[=:]* ]] && strip=${cur%"${cur##*[=:]}"}
        COMPREPLY=()
        while IFS= read -r c; do
                [ -n "$c" ] && COMPREPLY+=("${c#"$strip"}")
        done < <(_proctor_candidates)
}

complete -F _proctor -o bashdefault -o default proctor
