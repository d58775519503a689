# cudnnm hook for PowerShell, printed by `cudnnm env --shell powershell --use-on-cd`.
# Before each prompt, when the location (or CUDNNM_VERSION) differs from the
# last check, ask cudnnm which cuDNN release applies here and apply it. An
# unchanged location costs one string comparison and starts no process.
function global:__CudnnmHook {
    $key = "$($PWD.ProviderPath)|$env:CUDNNM_VERSION"
    if ($key -ne $global:__CudnnmLast) {
        $global:__CudnnmLast = $key
        $code = $global:LASTEXITCODE
        & $global:__CudnnmExe --home $global:__CudnnmHome env --shell powershell | Out-String | Invoke-Expression
        $global:LASTEXITCODE = $code
    }
}
if (-not $global:__CudnnmPrompt) {
    $global:__CudnnmPrompt = $function:prompt
    function global:prompt {
        __CudnnmHook
        & $global:__CudnnmPrompt
    }
}
# The lines above this hook already applied the release for this location.
$global:__CudnnmLast = "$($PWD.ProviderPath)|$env:CUDNNM_VERSION"
