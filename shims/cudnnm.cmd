@rem cudnnm hook for cmd, printed by `cudnnm env --shell cmd --use-on-cd` into a batch file to CALL.
@rem cmd has no folder-change event: cd, chdir, pushd and popd become doskey macros that change
@rem folder, then write and CALL this session's activation script. Nothing runs at a prompt.
@set "__CUDNNM_SCRIPT=%TEMP%\cudnnm-env-%RANDOM%%RANDOM%.cmd"
@doskey cd=cd $* $T "%__CUDNNM_EXE%" --home "%__CUDNNM_HOME%" env --shell cmd $G "%__CUDNNM_SCRIPT%" $T call "%__CUDNNM_SCRIPT%"
@doskey chdir=chdir $* $T "%__CUDNNM_EXE%" --home "%__CUDNNM_HOME%" env --shell cmd $G "%__CUDNNM_SCRIPT%" $T call "%__CUDNNM_SCRIPT%"
@doskey pushd=pushd $* $T "%__CUDNNM_EXE%" --home "%__CUDNNM_HOME%" env --shell cmd $G "%__CUDNNM_SCRIPT%" $T call "%__CUDNNM_SCRIPT%"
@doskey popd=popd $* $T "%__CUDNNM_EXE%" --home "%__CUDNNM_HOME%" env --shell cmd $G "%__CUDNNM_SCRIPT%" $T call "%__CUDNNM_SCRIPT%"
