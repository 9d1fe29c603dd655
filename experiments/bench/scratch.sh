# Sourced by every benchmark script that trains: a scratch folder for its runs, run store and settings
# (XDG_DATA_HOME, XDG_CONFIG_HOME: the user's are neither read nor written) and, on every way out — the end,
# an error, Ctrl-C, a kill, even SIGKILL — the processes it started are ended: its descendants (xvfb-run →
# studio → engine), then every run in the scratch folder by the pid in its run folder (a detached run, as the
# studio starts them, is in a session of its own and would train on beside the next measurement), then the
# folder is removed. Sets $work.
# Why a watcher process: bash runs a trap only after the foreground command returns, and a killed script's
# children live on; so a small process notes the script's descendants once a second (~2 ms of one core) and
# ends them when the script is gone, however it went.
work=$(mktemp -d)
export XDG_DATA_HOME=$work/data XDG_CONFIG_HOME=$work/config
_bench_parent=$$

_descendants() {  # PID [SKIP] → PID's descendants, deepest first, leaving out SKIP's subtree
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do
    [ "$child" = "${2:-}" ] && continue
    _descendants "$child" "${2:-}"
    echo "$child"
  done
}

_end_pids() {  # ends PIDS and every run in the scratch folder, then removes it
  local pids="$*" pid f alive
  for f in "$work"/data/tokamak/checkpoints/*/pid; do
    [ -f "$f" ] && pids="$pids $(cut -d' ' -f1 "$f")"
  done
  for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 50); do  # up to 5 s to write a checkpoint and go, then SIGKILL
    alive=0
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for pid in $pids; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}

(
  trap '' INT TERM HUP  # it outlives the script's signals to clean up after it
  me=$BASHPID
  started=
  while kill -0 "$_bench_parent" 2>/dev/null; do
    now=$(_descendants "$_bench_parent" "$me" | tr '\n' ' ')
    [ -n "$now" ] && started="$started $now"
    sleep 1
  done
  [ -d "$work" ] && _end_pids $started
) >/dev/null 2>&1 &
_bench_watcher=$!

_bench_exit() {
  trap - EXIT
  kill "$_bench_watcher" 2>/dev/null || true
  _end_pids $(_descendants $$ "$_bench_watcher")
}
trap _bench_exit EXIT

