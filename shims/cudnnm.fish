# cudnnm hook for fish, printed by `cudnnm env --shell fish --use-on-cd`.
# When the working folder (PWD) or CUDNNM_VERSION changes, and before each
# prompt, build a cheap key: the working folder, CUDNNM_VERSION, the nearest
# .cudnn-version (path and first 64 KiB) and the home's config.toml (the
# default). When it differs from the last one, ask cudnnm which cuDNN
# release applies here and apply it, so `cudnnm pin` and `cudnnm default`
# take effect at once (as mise and direnv do). Builtins only: no process
# starts unless it changed.
function __cudnnm_key
    set -l d $PWD
    set -l pin
    set -l text
    set -l conf
    while true
        if test -f "$d/.cudnn-version"
            set pin "$d/.cudnn-version"
            read -z -n 65536 text <"$pin" 2>/dev/null
            break
        end
        test -z "$d"; and break
        set d (string replace -r '/[^/]*$' '' -- $d)
    end
    test -f "$__cudnnm_home/config.toml"
    and read -z -n 65536 conf <"$__cudnnm_home/config.toml" 2>/dev/null
    set -g __cudnnm_now "$PWD|$CUDNNM_VERSION|$pin|$text|$conf"
end
function __cudnnm_hook --on-variable PWD --on-variable CUDNNM_VERSION --on-event fish_prompt --description 'cudnnm: apply the cuDNN release for this folder'
    __cudnnm_key
    if test "$__cudnnm_now" != "$__cudnnm_last"
        set -g __cudnnm_last $__cudnnm_now
        $__cudnnm_exe --home $__cudnnm_home env --shell fish --hook | source
    end
end
# The lines above this hook already applied the release for this folder.
__cudnnm_key
set -g __cudnnm_last $__cudnnm_now
