# cudnnm hook for zsh, printed by `cudnnm env --shell zsh --use-on-cd`.
# On every change of folder (chpwd), and before a prompt when CUDNNM_VERSION
# changed, ask cudnnm which cuDNN release applies here and apply it. An
# unchanged folder costs one string comparison and starts no process.
__cudnnm_hook() {
  local __cudnnm_status=$?
  local __cudnnm_key="$PWD|${CUDNNM_VERSION-}"
  if [[ "$__cudnnm_key" != "${__cudnnm_last-}" ]]; then
    __cudnnm_last=$__cudnnm_key
    eval "$("$__cudnnm_exe" --home "$__cudnnm_home" env --shell zsh)"
  fi
  return $__cudnnm_status
}
autoload -Uz add-zsh-hook
add-zsh-hook chpwd __cudnnm_hook
add-zsh-hook precmd __cudnnm_hook
# The lines above this hook already applied the release for this folder.
__cudnnm_last="$PWD|${CUDNNM_VERSION-}"
