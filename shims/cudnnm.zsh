# cudnnm hook for zsh, printed by `cudnnm env --shell zsh --use-on-cd`.
# On every change of folder (chpwd) and before each prompt, build a cheap
# key: the working folder, CUDNNM_VERSION, the nearest .cudnn-version (path
# and text, when under 64 KiB) and the home's config.toml (the default).
# When it differs from the last one, ask cudnnm which cuDNN release applies
# here and apply it, so `cudnnm pin` and `cudnnm default` take effect at
# once (as mise and direnv do). No process starts unless it changed.
__cudnnm_key() {
  local d=$PWD pin= text= conf= f
  while :; do
    if [[ -f "$d/.cudnn-version" ]]; then
      pin="$d/.cudnn-version"
      f=( "$pin"(N.L-65536) )
      (( $#f )) && text="$(<"$pin")" 2>/dev/null
      break
    fi
    [[ -z "$d" ]] && break
    d=${d%/*}
  done
  f=( "$__cudnnm_home/config.toml"(N.L-65536) )
  (( $#f )) && conf="$(<"$__cudnnm_home/config.toml")" 2>/dev/null
  __cudnnm_now="$PWD|${CUDNNM_VERSION-}|$pin|$text|$conf"
}
__cudnnm_hook() {
  local __cudnnm_status=$?
  __cudnnm_key
  if [[ "$__cudnnm_now" != "${__cudnnm_last-}" ]]; then
    __cudnnm_last=$__cudnnm_now
    eval "$("$__cudnnm_exe" --home "$__cudnnm_home" env --shell zsh --hook)"
  fi
  return $__cudnnm_status
}
autoload -Uz add-zsh-hook
add-zsh-hook chpwd __cudnnm_hook
add-zsh-hook precmd __cudnnm_hook
# The lines above this hook already applied the release for this folder.
__cudnnm_key
__cudnnm_last=$__cudnnm_now
