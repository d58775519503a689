# cudnnm hook for bash, printed by `cudnnm env --shell bash --use-on-cd`.
# Before each prompt, build a cheap key: the working folder, CUDNNM_VERSION,
# the nearest .cudnn-version (path and first 64 KiB) and the home's
# config.toml (the default). When it differs from the last prompt's, ask
# cudnnm which cuDNN release applies here and apply it, so `cudnnm pin` and
# `cudnnm default` take effect at once (as mise and direnv do). Building the
# key uses builtins only: one test per parent folder and two small reads;
# no process starts unless it changed.
__cudnnm_key() {
  local d=$PWD pin= text= conf=
  while :; do
    if [[ -f "$d/.cudnn-version" ]]; then
      pin="$d/.cudnn-version"
      IFS= read -r -d '' -N 65536 text < "$pin" 2>/dev/null
      break
    fi
    [[ -z "$d" ]] && break
    d=${d%/*}
  done
  [[ -f "$__cudnnm_home/config.toml" ]] &&
    IFS= read -r -d '' -N 65536 conf < "$__cudnnm_home/config.toml" 2>/dev/null
  __cudnnm_now="$PWD|${CUDNNM_VERSION-}|$pin|$text|$conf"
}
__cudnnm_hook() {
  local __cudnnm_status=$?
  __cudnnm_key
  if [[ "$__cudnnm_now" != "${__cudnnm_last-}" ]]; then
    __cudnnm_last=$__cudnnm_now
    eval "$("$__cudnnm_exe" --home "$__cudnnm_home" env --shell bash --hook)"
  fi
  return $__cudnnm_status
}
# Install once, whether PROMPT_COMMAND is a string or (bash 5.1+) an array.
__cudnnm_seen=0
for __cudnnm_c in "${PROMPT_COMMAND[@]-}"; do
  [[ "$__cudnnm_c" == *__cudnnm_hook* ]] && __cudnnm_seen=1
done
if (( ! __cudnnm_seen )); then
  if [[ "$(declare -p PROMPT_COMMAND 2>/dev/null)" == "declare -a"* ]]; then
    PROMPT_COMMAND=(__cudnnm_hook "${PROMPT_COMMAND[@]}")
  else
    PROMPT_COMMAND="__cudnnm_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
  fi
fi
unset __cudnnm_seen __cudnnm_c
# The lines above this hook already applied the release for this folder.
__cudnnm_key
__cudnnm_last=$__cudnnm_now
