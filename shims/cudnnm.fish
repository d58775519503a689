# cudnnm hook for fish, printed by `cudnnm env --shell fish --use-on-cd`.
# When the working folder (PWD) or CUDNNM_VERSION changes, ask cudnnm which
# cuDNN release applies here and apply it. No process starts otherwise.
function __cudnnm_hook --on-variable PWD --on-variable CUDNNM_VERSION --description 'cudnnm: apply the cuDNN release for this folder'
    set -l key "$PWD|$CUDNNM_VERSION"
    if test "$key" != "$__cudnnm_last"
        set -g __cudnnm_last $key
        $__cudnnm_exe --home $__cudnnm_home env --shell fish | source
    end
end
# The lines above this hook already applied the release for this folder.
set -g __cudnnm_last "$PWD|$CUDNNM_VERSION"
