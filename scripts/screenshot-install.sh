#!/usr/bin/env bash
# docs/screenshots/install-on-host.png and install-then-train.png: a new user's two clicks under Xvfb — Install…
# on a fresh host, then Start — for docs/REMOTE.md, with the time each took printed. The "host" is this
# machine's own sshd on a free loopback port (as scripts/screenshot-remote.sh starts it), whose sessions get a
# fresh home and the PATH sshd gives a non-interactive login (no ~/.local/bin on it, as on a cloud image); torch
# comes from the set-up's venv (the dialog's "torch from"), so nothing is downloaded. Everything is removed at the end.
#   scripts/screenshot-install.sh OUT_DIR [STEPS]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$(realpath -m "${1:?usage: $0 OUT_DIR [STEPS]}")
steps=${2:-20}
cache=${TOKAMAK_CACHE:-$HOME/.cache/tokamak}
tmp=$(mktemp -d)
cleanup() {
  for f in "$tmp"/home/.local/share/tokamak/checkpoints/*/pid; do
    [ -f "$f" ] || continue
    pid=$(cut -d' ' -f1 "$f")
    for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
  done
  ssh -F "$tmp/ssh_config" -o ControlPath="$tmp/cache/ssh/%C" -O exit fresh-gpu 2>/dev/null || true
  [ -f "$tmp/sshd.pid" ] && kill "$(cat "$tmp/sshd.pid")" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/user"
cp "$tmp/user.pub" "$tmp/authorized_keys"
mkdir -p /run/sshd "$tmp/home" "$tmp/local" "$tmp/config/Tokamak" "$tmp/cache"
ln -s "$cache/assets" "$tmp/cache/assets"  # this side's tokenizer and corpus; the kit is packed afresh
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
SetEnv HOME=$tmp/home XDG_DATA_HOME=$tmp/home/.local/share TOKAMAK_CACHE=$tmp/home/.cache/tokamak
CFG
/usr/sbin/sshd -D -e -f "$tmp/sshd_config" -p "$port" 2> "$tmp/sshd.log" &
for _ in $(seq 50); do grep -q "Server listening" "$tmp/sshd.log" && break; sleep 0.1; done
cat > "$tmp/ssh_config" <<CFG
Host fresh-gpu
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
host=fresh-gpu
tokamak=tokamak

[install]
torchPython=$cache/venv/bin/python
CFG
build/app/tokamak config --defaults | python3 -c '
import json, sys
c = json.load(sys.stdin)
c["model"]["preset"] = "nano"; c["train"]["steps"] = 200; c["train"]["log_every"] = 1; c["sample"]["every"] = 10
c["name"] = "nano on a fresh host"
print(json.dumps(c))' > "$tmp/setup.json"
XDG_CONFIG_HOME=$tmp/config XDG_DATA_HOME=$tmp/local TOKAMAK_CACHE=$tmp/cache TOKAMAK_SSH_CONFIG=$tmp/ssh_config \
  xvfb-run -a -s "-screen 0 1366x768x24" build/app/studio/tokamak-studio --config "$tmp/setup.json" \
  --install-screenshot "$out/install-on-host.png" --screenshot "$out/install-then-train.png" --after-steps "$steps"
