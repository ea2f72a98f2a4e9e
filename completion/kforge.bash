# bash completion for kforge(1)                              -*- shell-script -*-
#
# Install as $(pkg-config --variable=completionsdir bash-completion)/kforge
# (make install puts it in $PREFIX/share/bash-completion/completions), or
# source it from ~/.bashrc.
#
# Completes: the commands; each command's options (read from its --help);
# the values of --format, --strategy, --objective, --arch, --dtype, --op, --devices, --shard, --columns
# (comma-separated: the column keys and axis names) and --sort;
# config files (*.json, and '-'); results files (*.jsonl, also merge's and compare's arguments); --set keys
# (the variant parameters, n, constraints,
# bench.*) and, after "--set KEY=", the values of enumerated keys.
# best and export take one option per key axis of the family (--dtype and --op
# for the built-in families, none for a family without key axes): their --help
# names them; the list below is the built-ins'.
# Needs nothing from the bash-completion package.
#
# COMPREPLY=($(compgen ...)) is the completion idiom; the words never hold spaces.
# shellcheck disable=SC2207

_kforge_opts_static() {
    case $1 in
    run) echo "--set --only --format --no-header --results --no-results --resume --no-resume --speedup --columns --sort --timeout --device
              --devices --shard --jobs -j --cache-dir --no-cache --lineinfo --quiet -q --help" ;;
    gen) echo "--set --only --reference --help" ;;
    check) echo "-v --verbose --compile --shard --arch --set --jobs -j --cache-dir --no-cache --lineinfo --help" ;;
    info) echo "--device --format --help" ;;
    tune) echo "--strategy --budget --time --seed --first-improvement --objective --set --results --resume --no-resume
               --db --no-db --simulate --format --top --timeout --device --devices --shard --jobs -j --cache-dir --no-cache
               --lineinfo --quiet -q --help" ;;
    best) echo "--kernel --dtype --op --acc-dtype --n --rows --cols --row_stride --db --gpu --deterministic --header
               --list --delete --help" ;;
    export) echo "--dtype --op --acc-dtype --kernel --db --gpu --deterministic -o --help" ;;
    axes) echo "--format --no-header --help" ;;
    merge) echo "--kernel --results --db --no-db --format --quiet -q --help" ;;
    compare) echo "--kernel --fail-above --any-device --match --all --format --no-header --help" ;;
    esac
}

# The options of a command: those its --help names (so that new options
# appear without editing this file), else the list above.
_kforge_opts() {
    local cmd=$1 bin=$2 var="_kforge_opts_cache_$1" help opts
    if [[ -z ${!var-} ]]; then
        help=$("$bin" "$cmd" --help 2>/dev/null)
        # options are what the usage line shows in brackets and what the
        # option list's lines start with, up to their description ("  -j N,
        # --jobs N   ..." gives both; not the examples)
        opts=$( {
            printf '%s\n' "$help" | grep '^usage:' | grep -oE '\[--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d '['
            printf '%s\n' "$help" | grep -E '^  -' | sed -E 's/^  (([^ ]| [^ ])*).*/\1/' |
                grep -oE -- '(^| )--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d ' '
        } | sort -u | tr '\n' ' ')
        printf -v "$var" '%s' "${opts:-$(_kforge_opts_static "$cmd")} --help"
    fi
    echo "${!var}"
}

# Keys and values come from the parameter table (kforge axes --format csv),
# so new axes and families need no edit here.
_kforge_axes() {
    if [[ -z ${_kforge_axes_cache-} ]]; then
        _kforge_axes_cache=$("${_kforge_bin:-kforge}" axes --format csv 2>/dev/null)
    fi
    printf '%s\n' "$_kforge_axes_cache"
}

_kforge_set_keys() {
    local keys
    keys=$(_kforge_axes | cut -d, -f2 | sort -u | sed 's/$/=/' | tr '\n' ' ')
    echo "$keys constraints= bench.warmup= bench.min_reps= bench.max_reps= bench.repetitions= bench.max_time_s=
          bench.max_noise= bench.flush_l2= bench.seed= bench.offset= bench.timeout_s= bench.energy="
}

_kforge_set_values() {
    case $1 in
    bench.flush_l2 | bench.energy) echo "true false" ;;
    *) _kforge_axes | awk -F, -v k="$1" '$2 == k { print $3 }' | tr ' ' '\n' | sort -u | tr '\n' ' ' ;;
    esac
}

_kforge_files() { # $1: glob of the files wanted (e.g. *.json); $2: "dirs" for directories only
    local IFS=$'\n' f
    compopt -o filenames 2>/dev/null
    for f in $([[ ${2-} == dirs ]] || compgen -f -X "!$1" -- "$cur") $(compgen -d -- "$cur"); do
        # hidden files only when asked for with a leading dot, as readline does
        [[ ${f##*/} == .* && ${cur##*/} != .* ]] || COMPREPLY+=("$f")
    done
}

_kforge() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} bin=${COMP_WORDS[0]}
    local cmd='' i
    COMPREPLY=()
    [[ $bin == */* || $(type -t "$bin") == file ]] || bin=kforge
    _kforge_bin=$bin

    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        run | gen | check | info | tune | best | export | axes | merge | compare | help)
            cmd=${COMP_WORDS[i]}
            break
            ;;
        esac
    done
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "run gen check info tune best export axes merge compare help --help --version" -- "$cur"))
        return
    fi

    # --set KEY=VALUE.  With '=' in COMP_WORDBREAKS (the default) bash splits
    # "--set dtype=fl" into "--set" "dtype" "=" "fl"; otherwise it is one word.
    local key='' val='' split=''
    if [[ $cur == "=" && ${COMP_WORDS[COMP_CWORD - 2]} == --set ]]; then
        key=$prev val='' split=1
    elif [[ $prev == "=" && ${COMP_WORDS[COMP_CWORD - 3]} == --set ]]; then
        key=${COMP_WORDS[COMP_CWORD - 2]} val=$cur split=1
    elif [[ $prev == --set && $cur == *=* ]]; then
        key=${cur%%=*} val=${cur#*=}
    fi
    if [[ -n $key ]]; then
        local vals
        vals=$(_kforge_set_values "$key")
        if [[ -n $split ]]; then
            COMPREPLY=($(compgen -W "$vals" -- "$val"))
        else
            COMPREPLY=($(compgen -P "$key=" -W "$vals" -- "$val"))
        fi
        return
    fi

    case $prev in
    --set)
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -W "$(_kforge_set_keys)" -- "$cur"))
        return
        ;;
    --format)
        if [[ $cmd == info ]]; then
            COMPREPLY=($(compgen -W "table json" -- "$cur"))
        elif [[ $cmd == merge ]]; then
            COMPREPLY=($(compgen -W "table jsonl json" -- "$cur"))
        elif [[ $cmd == tune ]]; then
            COMPREPLY=($(compgen -W "table jsonl json md" -- "$cur"))
        elif [[ $cmd == run || $cmd == compare ]]; then
            COMPREPLY=($(compgen -W "table csv jsonl json md" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "table csv jsonl json" -- "$cur"))
        fi
        return
        ;;
    --match)
        # KEY[,KEY...]: the keys of every family (sizes and parameters), kernel, name, gpu, bench.*
        local done_keys=${cur%"${cur##*,}"} keys
        keys="$(_kforge_axes | cut -d, -f2 | sort -u) kernel name gpu bench.warmup bench.min_reps bench.max_reps
              bench.max_time_s bench.max_noise bench.flush_l2 bench.seed bench.offset bench.energy"
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -P "$done_keys" -W "$keys" -- "${cur##*,}"))
        return
        ;;
    --columns | --sort)
        # the table's column keys and the axes (kforge axes); --columns takes a
        # comma-separated list: complete its last item
        local keys="name kernel size status time min noise gbps peak energy gbpj" pre=''
        [[ $prev == --columns ]] && keys="auto axes $keys step cumul sm note" && [[ $cur == *,* ]] && pre=${cur%,*},
        keys="$keys $(_kforge_axes | cut -d, -f2 | sort -u | tr '\n' ' ')"
        COMPREPLY=($(compgen -P "$pre" -W "$keys" -- "${cur##*,}"))
        return
        ;;
    --strategy)
        COMPREPLY=($(compgen -W "exhaustive random local anneal genetic model" -- "$cur"))
        return
        ;;
    --objective)
        COMPREPLY=($(compgen -W "time energy edp" -- "$cur"))
        return
        ;;
    --arch)
        COMPREPLY=($(compgen -W "sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_100 sm_103 sm_110 sm_120" -- "$cur"))
        return
        ;;
    --dtype)
        COMPREPLY=($(compgen -W "$(_kforge_set_values dtype)" -- "$cur"))
        return
        ;;
    --acc-dtype)
        COMPREPLY=($(compgen -W "$(_kforge_set_values acc_dtype)" -- "$cur"))
        return
        ;;
    --op)
        COMPREPLY=($(compgen -W "$(_kforge_set_values op)" -- "$cur"))
        return
        ;;
    --results | --simulate)
        _kforge_files '*.jsonl'
        return
        ;;
    --cache-dir | --db)
        _kforge_files '' dirs
        return
        ;;
    -o)
        _kforge_files '*.cuh'
        return
        ;;
    --kernel)
        COMPREPLY=($(compgen -W "$("$bin" axes 2>/dev/null | cut -d' ' -f1)" -- "$cur"))
        return
        ;;
    --devices)
        COMPREPLY=($(compgen -W "all 0 0,1 0-3 0-7" -- "$cur"))
        return
        ;;
    --shard)
        COMPREPLY=($(compgen -W "1/2 2/2 1/4 2/4 3/4 4/4" -- "$cur"))
        return
        ;;
    --timeout | --device | --jobs | -j | --budget | --time | --top | --seed | --n | --rows | --cols | --row_stride | --gpu | --fail-above | --device-model | --only)
        return # a number: nothing to offer
        ;;
    esac

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_kforge_opts "$cmd" "$bin")" -- "$cur"))
        [[ $cur == - && $cmd != info && $cmd != best && $cmd != export && $cmd != merge && $cmd != help ]] && COMPREPLY+=(-)
        return
    fi
    case $cmd in
    run | gen | check | tune) _kforge_files '*.json' ;;
    merge | compare) _kforge_files '*.jsonl' ;;
    help) COMPREPLY=($(compgen -W "run gen check info tune best export axes merge compare" -- "$cur")) ;;
    axes) COMPREPLY=($(compgen -W "$("$bin" axes 2>/dev/null | cut -d' ' -f1)" -- "$cur")) ;;
    esac
} &&
    complete -F _kforge kforge
