# cudnnm hook for bash, printed by `cudnnm env --shell bash --use-on-cd`.
# Before each prompt, when the working folder (or CUDNNM_VERSION) differs from
# the last check, ask cudnnm which cuDNN release applies here and apply it.
# An unchanged folder costs one string comparison and starts no process.
__cudnnm_hook() {
  local __cudnnm_status=$?
  local __cudnnm_key="$PWD|${CUDNNM_VERSION-}"
  if [[ "$__cudnnm_key" != "${__cudnnm_last-}" ]]; then
    __cudnnm_last=$__cudnnm_key
    eval "$("$__cudnnm_exe" --home "$__cudnnm_home" env --shell bash)"
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
__cudnnm_last="$PWD|${CUDNNM_VERSION-}"
