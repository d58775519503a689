# Installs cudnnm on Windows without Rust and without administrator rights:
#
#   powershell -ExecutionPolicy ByPass -c "irm RELEASE_BASE/install.ps1 | iex"
#
# (RELEASE_BASE is $ReleaseBase below; README.md's Install section has the
# full command.)
#
# Downloads the Windows zip and SHA256SUMS from $env:CUDNNM_INSTALL_BASE
# (default: $ReleaseBase, the latest release; a mirror URL or a local folder works
# too), checks the zip's SHA-256 before anything is written, puts cudnnm.exe
# into $env:CUDNNM_INSTALL_DIR (default: %LOCALAPPDATA%\cudnnm\bin), and adds
# that folder to the user PATH in the registry (HKCU\Environment), never
# with setx, which cuts PATH at 1,024 characters.
$ErrorActionPreference = 'Stop'
Set-StrictMode -Version Latest

# The project's release downloads: the one place this script names them
# (scripts/dist.sh writes a fork's own into the copy it releases).
$ReleaseBase = 'https://github.com/cudnnm/cudnnm/releases/latest/download'
$base = if ($env:CUDNNM_INSTALL_BASE) { $env:CUDNNM_INSTALL_BASE } else { $ReleaseBase }
$base = $base.TrimEnd('/', '\')
$dest = if ($env:CUDNNM_INSTALL_DIR) { $env:CUDNNM_INSTALL_DIR } else { Join-Path $env:LOCALAPPDATA 'cudnnm\bin' }
$target = 'x86_64-pc-windows-gnu'

function Fail($msg, $hint) {
    Write-Host "error: $msg"
    if ($hint) { Write-Host "help: $hint" }
    exit 1
}

function Fetch($source, $file) {
    if ($source -match '^https?://') {
        [Net.ServicePointManager]::SecurityProtocol = [Net.SecurityProtocolType]::Tls12
        Invoke-WebRequest -UseBasicParsing -Uri $source -OutFile $file
    } elseif ($source -match '^file://') {
        Copy-Item -LiteralPath ([Uri]$source).LocalPath -Destination $file
    } else {
        Copy-Item -LiteralPath $source -Destination $file
    }
}

function Join-Base($name) {
    if ($base -match '^[a-z]+://') { "$base/$name" } else { Join-Path $base $name }
}

if (-not [Environment]::Is64BitOperatingSystem) {
    Fail 'cudnnm is released for 64-bit Windows only' 'pip install cudnnm, or build from source'
}

$tmp = Join-Path ([IO.Path]::GetTempPath()) ("cudnnm-install-" + [Guid]::NewGuid())
New-Item -ItemType Directory -Path $tmp | Out-Null
try {
    $sums = Join-Path $tmp 'SHA256SUMS'
    try { Fetch (Join-Base 'SHA256SUMS') $sums } catch {
        Fail "could not download $(Join-Base 'SHA256SUMS'): $_" 'check the network, or set CUDNNM_INSTALL_BASE to a mirror or folder'
    }
    $pattern = '^([0-9a-fA-F]{64}) [ *](cudnnm-([0-9][0-9.]*)-' + [Regex]::Escape($target) + '\.zip)$'
    $found = Get-Content $sums | ForEach-Object { if ($_ -match $pattern) { [pscustomobject]@{ Hash = $Matches[1].ToLower(); Name = $Matches[2]; Version = [version]$Matches[3] } } } |
        Sort-Object Version | Select-Object -Last 1
    if (-not $found) { Fail "SHA256SUMS at $base names no cudnnm archive for $target" 'set CUDNNM_INSTALL_BASE to a release folder that has one' }

    Write-Host "cudnnm installer: downloading cudnnm $($found.Version) from $base"
    $zip = Join-Path $tmp $found.Name
    try { Fetch (Join-Base $found.Name) $zip } catch { Fail "could not download $($found.Name): $_" 'check the network, then run the installer again' }
    $got = (Get-FileHash -Algorithm SHA256 -LiteralPath $zip).Hash.ToLower()
    if ($got -ne $found.Hash) {
        Fail "$($found.Name) does not match SHA256SUMS (expected $($found.Hash), got $got); nothing was installed" 'download again; if it keeps failing, the release folder is damaged or tampered with'
    }

    $unpacked = Join-Path $tmp 'unpacked'
    Expand-Archive -LiteralPath $zip -DestinationPath $unpacked
    $exe = Join-Path $unpacked 'cudnnm.exe'
    if (-not (Test-Path -LiteralPath $exe)) { Fail "$($found.Name) holds no cudnnm.exe; nothing was installed" }

    New-Item -ItemType Directory -Force -Path $dest | Out-Null
    $final = Join-Path $dest 'cudnnm.exe'
    if (Test-Path -LiteralPath $final) {
        # A running cudnnm.exe cannot be overwritten, but it can be renamed aside.
        $old = "$final.old"
        Remove-Item -LiteralPath $old -Force -ErrorAction SilentlyContinue
        Move-Item -LiteralPath $final -Destination $old -Force
    }
    Copy-Item -LiteralPath $exe -Destination $final
    Write-Host "cudnnm installer: installed cudnnm $($found.Version) to $final"

    # The user PATH, read and written as the registry holds it (REG_EXPAND_SZ
    # entries such as %USERPROFILE%\bin stay unexpanded).
    $key = [Microsoft.Win32.Registry]::CurrentUser.OpenSubKey('Environment', $true)
    $raw = $key.GetValue('Path', '', [Microsoft.Win32.RegistryValueOptions]::DoNotExpandEnvironmentNames)
    $parts = @($raw -split ';' | Where-Object { $_ -ne '' })
    if ($parts -notcontains $dest) {
        $key.SetValue('Path', (@($parts) + $dest) -join ';', [Microsoft.Win32.RegistryValueKind]::ExpandString)
        # Tell running programs (Explorer, new terminals) that the environment changed.
        [Environment]::SetEnvironmentVariable('CUDNNM_INSTALL_PING', '1', 'User')
        [Environment]::SetEnvironmentVariable('CUDNNM_INSTALL_PING', $null, 'User')
        Write-Host "cudnnm installer: added $dest to your user PATH; open a new terminal to use cudnnm"
    }
    $key.Close()
} finally {
    Remove-Item -LiteralPath $tmp -Recurse -Force -ErrorAction SilentlyContinue
}
