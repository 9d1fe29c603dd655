#!/usr/bin/env bash
# docs/screenshots/remote-run.png: the studio training on an SSH host, for docs/USING.md, under Xvfb. The "host"
# is this machine's own sshd on a free loopback port, started as tests/support/sshd_server.h starts it
# (throwaway host and user keys in a temporary folder, nothing of the system's configuration touched); the
# studio reaches it through a Host entry ("gpu-server") of an ssh config of its own ($TOKAMAK_SSH_CONFIG), with
# "Where" set to it in a settings file of its own. Everything is removed at the end, and the run on the host
# ended by pid.
#   scripts/screenshot-remote.sh OUT.png [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$(realpath -m "${1:?usage: $0 OUT.png [STEPS]}")
steps=${2:-40}
tmp=$(mktemp -d)
cleanup() {
  # The studio stops its run on the host before it quits; whatever is left is ended by its pid file.
  for f in "$tmp"/host-data/tokamak/checkpoints/*/pid; do
    [ -f "$f" ] || continue
    pid=$(cut -d' ' -f1 "$f")
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  done
  # The studio's shared connection (ControlPersist) would otherwise linger for a minute.
  ssh -F "$tmp/ssh_config" -o ControlPath="${TOKAMAK_CACHE:-$HOME/.cache/tokamak}/ssh/%C" -O exit gpu-server 2>/dev/null || true
  [ -f "$tmp/sshd.pid" ] && kill "$(cat "$tmp/sshd.pid")" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/user"
cp "$tmp/user.pub" "$tmp/authorized_keys"
mkdir -p /run/sshd "$tmp/host-data" "$tmp/local" "$tmp/config/Tokamak"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$tmp/sshd_config" <<CFG
ListenAddress 127.0.0.1
HostKey $tmp/host_key
PidFile $tmp/sshd.pid
AuthorizedKeysFile $tmp/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
SetEnv XDG_DATA_HOME=$tmp/host-data TOKAMAK_CACHE=${TOKAMAK_CACHE:-$HOME/.cache/tokamak}
CFG
/usr/sbin/sshd -D -e -f "$tmp/sshd_config" -p "$port" 2> "$tmp/sshd.log" &
for _ in $(seq 50); do grep -q "Server listening" "$tmp/sshd.log" && break; sleep 0.1; done
cat > "$tmp/ssh_config" <<CFG
Host gpu-server
  HostName 127.0.0.1
  Port $port
  User $(id -un)
  IdentityFile $tmp/user
  IdentitiesOnly yes
  UserKnownHostsFile $tmp/known_hosts
  StrictHostKeyChecking accept-new
CFG
cat > "$tmp/config/Tokamak/Tokamak Studio.conf" <<CFG
[where]
host=gpu-server
tokamak=$root/build/app/tokamak
CFG
# The README's default run (nano on The Jargon File), sampling often so the samples pane fills.
build/app/tokamak config --defaults | python3 -c '
import json, sys
c = json.load(sys.stdin)
c["model"]["preset"] = "nano"; c["train"]["steps"] = 300; c["train"]["log_every"] = 1; c["sample"]["every"] = 10
c["name"] = "nano on gpu-server"
print(json.dumps(c))' > "$tmp/setup.json"
XDG_CONFIG_HOME=$tmp/config XDG_DATA_HOME=$tmp/local TOKAMAK_SSH_CONFIG=$tmp/ssh_config \
  xvfb-run -a -s "-screen 0 1600x1000x24" build/app/studio/tokamak-studio --config "$tmp/setup.json" \
  --screenshot "$out" --after-steps "$steps"
