# bash completion for kforge(1)                              -*- shell-script -*-
#
# Install as $(pkg-config --variable=completionsdir bash-completion)/kforge
# (make install puts it in $PREFIX/share/bash-completion/completions), or
# source it from ~/.bashrc.
#
# Completes: the commands; each command's options (read from its --help);
# the values of --format, --strategy, --arch, --dtype and --op; config files (*.json, and '-');
# results files (*.jsonl); --set keys (the variant parameters, n, constraints,
# bench.*) and, after "--set KEY=", the values of enumerated keys.
# Needs nothing from the bash-completion package.
#
# COMPREPLY=($(compgen ...)) is the completion idiom; the words never hold spaces.
# shellcheck disable=SC2207

_kforge_opts_static() {
    case $1 in
    run) echo "--set --only --format --results --no-results --resume --no-resume --speedup --timeout --device
              --jobs -j --cache-dir --no-cache --lineinfo --quiet -q --help" ;;
    gen) echo "--set --only --help" ;;
    check) echo "--compile --arch --set --jobs -j --cache-dir --no-cache --lineinfo --help" ;;
    info) echo "--device --format --help" ;;
    tune) echo "--strategy --budget --time --seed --first-improvement --set --results --resume --no-resume --db
               --no-db --simulate --format --timeout --device --jobs --cache-dir --no-cache --lineinfo --quiet --help" ;;
    best) echo "--kernel --dtype --op --n --db --gpu --deterministic --header --list --delete --help" ;;
    export) echo "--dtype --op --kernel --db --device-model --gpu --deterministic -o --help" ;;
    esac
}

# The options of a command: those its --help names (so that new options
# appear without editing this file), else the list above.
_kforge_opts() {
    local cmd=$1 bin=$2 var="_kforge_opts_cache_$1" help opts
    if [[ -z ${!var-} ]]; then
        help=$("$bin" "$cmd" --help 2>/dev/null)
        # options are what the usage line shows in brackets and what the
        # option list starts its lines with (not the examples)
        opts=$( {
            printf '%s\n' "$help" | grep '^usage:' | grep -oE '\[--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d '['
            printf '%s\n' "$help" | grep -oE '^  --?[a-zA-Z][a-zA-Z0-9-]*' | tr -d ' '
        } | sort -u | tr '\n' ' ')
        printf -v "$var" '%s' "${opts:-$(_kforge_opts_static "$cmd")} --help"
    fi
    echo "${!var}"
}

_kforge_set_keys() {
    echo "dtype= op= algorithm= block_size= elements_per_thread= unroll= vector_width= grid= passes= layout=
          accumulator= warp_reduce= load= n= constraints= bench.warmup= bench.min_reps= bench.max_reps=
          bench.repetitions= bench.max_time_s= bench.max_noise= bench.flush_l2= bench.seed= bench.offset=
          bench.timeout_s="
}

_kforge_set_values() {
    case $1 in
    dtype) echo "int32 uint32 int64 float32 float64" ;;
    op) echo "sum min max prod and or xor" ;;
    algorithm) echo "atomic_global atomic_shared interleaved_divergent interleaved_strided sequential shuffle
                     warp_intrinsic" ;;
    block_size) echo "32 64 128 256 512 1024" ;;
    elements_per_thread) echo "1 2 4 8 16 32" ;;
    unroll) echo "none last_warp full" ;;
    vector_width) echo "1 2 4" ;;
    grid) echo "auto" ;;
    passes) echo "auto multi_kernel atomic last_block" ;;
    layout) echo "block grid" ;;
    accumulator) echo "register shared" ;;
    warp_reduce) echo "shared shuffle intrinsic" ;;
    load) echo "plain ldg stream ldg_prefetch" ;;
    n) echo "2^10 2^16 2^20 2^24 2^28 2^30" ;;
    bench.flush_l2) echo "true false" ;;
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

    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        run | gen | check | info | tune | best | export | help)
            cmd=${COMP_WORDS[i]}
            break
            ;;
        esac
    done
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "run gen check info tune best export help --help --version" -- "$cur"))
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
        elif [[ $cmd == tune ]]; then
            COMPREPLY=($(compgen -W "table jsonl json" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "table csv jsonl json" -- "$cur"))
        fi
        return
        ;;
    --strategy)
        COMPREPLY=($(compgen -W "exhaustive random local anneal genetic" -- "$cur"))
        return
        ;;
    --arch)
        COMPREPLY=($(compgen -W "sm_70 sm_75 sm_80 sm_86 sm_87 sm_89 sm_90 sm_100 sm_120" -- "$cur"))
        return
        ;;
    --dtype)
        COMPREPLY=($(compgen -W "$(_kforge_set_values dtype)" -- "$cur"))
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
        COMPREPLY=($(compgen -W "$("$bin" axes 2> /dev/null | sed -n 's/^\([a-z_][a-z0-9_]*\) .*/\1/p')" -- "$cur"))
        return
        ;;
    --timeout | --device | --jobs | -j | --budget | --time | --seed | --n | --gpu | --device-model | --only)
        return # a number: nothing to offer
        ;;
    esac

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_kforge_opts "$cmd" "$bin")" -- "$cur"))
        [[ $cur == - && $cmd != info && $cmd != best && $cmd != export && $cmd != help ]] && COMPREPLY+=(-)
        return
    fi
    case $cmd in
    run | gen | check | tune) _kforge_files '*.json' ;;
    help) COMPREPLY=($(compgen -W "run gen check info tune best export" -- "$cur")) ;;
    esac
} &&
    complete -F _kforge kforge
