#!/usr/bin/env bash
# Installs everything Tokamak needs on a Debian 12 machine, and nothing twice: Debian packages, the pinned
# LibTorch (PyPI's torch wheel in a venv) and the assets (GPT-2 merge ranks, the default corpus).
# Quick when all is there. Everything downloaded lands in the cache folder, never in git.
set -euo pipefail

TORCH_VERSION=2.11.0
WHISPER_VERSION=20250625     # PyPI's openai-whisper: carries whisper/assets/gpt2.tiktoken
TIKTOKEN_VERSION=0.14.0      # OpenAI's tokenizer: reference ids for the tokenizer tests
TRANSFORMERS_VERSION=5.23.0  # Hugging Face's GPT-2: the reference for `tokamak export --format hf` and init_from
SCIPY_VERSION=1.16.2         # the reference for the verdicts' statistics (Welch's t-test)
GGUF_VERSION=0.19.0          # llama.cpp's own GGUF reader: the reference for `tokamak export --format gguf`
LLAMA_CPP_VERSION=0.3.36     # llama-cpp-python: llama.cpp itself, built here, runs our GGUF files in the tests
TENSORBOARD_VERSION=2.21.0     # tensorboard's own event reader: the reference for `runs export --format tensorboard`
MLFLOW_VERSION=3.17.2         # a real MLflow tracking server and client: the reference for `runs export --to mlflow`

cache=${TOKAMAK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tokamak}
venv=$cache/venv
assets=$cache/assets
mkdir -p "$cache" "$assets"

say() { printf 'setup: %s\n' "$*" >&2; }
sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# 1. Debian packages (the GUI ones are skipped with TOKAMAK_GUI=OFF, e.g. on a GPU server).
pkgs=(build-essential cmake ninja-build ccache python3-venv pkg-config libsqlite3-dev libpcre2-dev
      nlohmann-json3-dev libcli11-dev libgloo-dev libjemalloc-dev zlib1g-dev jargon-text
      libboost-math-dev   # the t and normal distributions of the verdicts between groups of runs (header-only)
      libprotobuf-dev protobuf-compiler  # TensorBoard's event records (runs export --format tensorboard)
      clang    # clang: libFuzzer and the sanitizers for scripts/fuzz.sh
      openssh-client openssh-server   # ssh drives a GPU host; the tests run their own sshd on loopback
      libcurl4-openssl-dev  # Hub downloads (engine/fleet/hub)
      nginx-light   # the tests' own HTTP server standing in for the Hub (tests/support/nginx_server.h)
      libglib2.0-bin dbus-daemon  # gdbus sends desktop notifications; the tests start their own session bus
      util-linux   # taskset: the slowdown tests pin a busy process onto a run's core (Essential, named so it is never left out)
      slurm-client slurmctld slurmd munge)  # Slurm jobs; the tests start their own one-node Slurm (tests/support/slurm_cluster.h)
# (Debian's openssh-server, slurmctld, slurmd and munge also enable the system's daemons where systemd runs; the
# tests never use those: they start their own in a temporary folder.)
if [ "${TOKAMAK_GUI:-ON}" != OFF ]; then
  pkgs+=(qt6-base-dev qt6-svg-dev libqcustomplot-dev xvfb xauth)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 2. LibTorch from the torch wheel, in a venv of our own. A stamp file records what is installed, so a
#    second set-up does not even start Python.
stamp="$venv/.tokamak-stamp"
want="torch==$TORCH_VERSION tiktoken==$TIKTOKEN_VERSION transformers==$TRANSFORMERS_VERSION scipy==$SCIPY_VERSION gguf==$GGUF_VERSION"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  say "installing $want into $venv (the torch wheel is several GB; once only)"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check $want
  "$venv/bin/python" -c "import torch, tiktoken, transformers, scipy, gguf; assert torch.__version__.startswith('$TORCH_VERSION'), torch.__version__"
  echo "$want" > "$stamp"
fi

# 2b. llama.cpp, compiled from PyPI's llama-cpp-python (a source package: 7–10 minutes on 2 cores, once). Only the
#     library the Python binding loads is built: no server, tools or examples; for AVX2, not -march=native, so a
#     cache copied to another x86-64 machine of this project (AVX2 or AVX-512) still runs. A failed build is said
#     and set-up goes on: the tests that need llama.cpp then skip, saying so. scripts/test.sh asks for it
#     (TOKAMAK_LLAMA_CPP=ON); scripts/start.sh, which only opens the studio, does not.
llama_stamp="$venv/.tokamak-llama-stamp"
llama_want="llama-cpp-python==$LLAMA_CPP_VERSION avx2"
if [ "${TOKAMAK_LLAMA_CPP:-OFF}" = ON ] && [ "$(cat "$llama_stamp" 2>/dev/null)" != "$llama_want" ]; then
  say "building llama.cpp (llama-cpp-python==$LLAMA_CPP_VERSION from source; once only, several minutes)"
  if CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_OPENMP=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF -DMTMD_BUILD=OFF" \
     CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir \
       --force-reinstall --no-deps "llama-cpp-python==$LLAMA_CPP_VERSION" >"$cache/llama-cpp-build.log" 2>&1 &&
     "$venv/bin/pip" install -q --disable-pip-version-check "llama-cpp-python==$LLAMA_CPP_VERSION" \
       >>"$cache/llama-cpp-build.log" 2>&1 &&
     "$venv/bin/python" -c "import llama_cpp" 2>>"$cache/llama-cpp-build.log"; then
    echo "$llama_want" > "$llama_stamp"
  else
    say "warning: llama.cpp did not build (see $cache/llama-cpp-build.log); the GGUF tests that run it will skip"
  fi
fi

# 2c. The readers of what `runs export --format tensorboard` and `--to mlflow` write: tensorboard's own event
#     reader and a real MLflow tracking server with its client (the clients tier starts one on loopback). Several
#     hundred MB of Python (MLflow's server brings pandas and pyarrow), so only for the tests: scripts/test.sh asks for
#     them (TOKAMAK_READERS=ON); scripts/start.sh does not.
readers_stamp="$venv/.tokamak-readers-stamp"
readers_want="tensorboard==$TENSORBOARD_VERSION mlflow==$MLFLOW_VERSION"
if [ "${TOKAMAK_READERS:-OFF}" = ON ] && [ "$(cat "$readers_stamp" 2>/dev/null)" != "$readers_want" ]; then
  say "installing $readers_want into $venv (the export tests' readers; once only)"
  "$venv/bin/pip" install -q --disable-pip-version-check $readers_want
  "$venv/bin/python" -c "import tensorboard, mlflow"
  echo "$readers_want" > "$readers_stamp"
fi

# 3. Assets. Written to a temporary name first, then renamed, so an interrupted set-up leaves nothing half-made.
if [ ! -s "$assets/gpt2.tiktoken" ]; then
  say "fetching GPT-2 merge ranks (openai-whisper==$WHISPER_VERSION, assets only)"
  tmp=$(mktemp -d)
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$tmp" "openai-whisper==$WHISPER_VERSION"
  tar -xzf "$tmp"/openai_whisper-*.tar.gz -C "$tmp" --wildcards '*/whisper/assets/gpt2.tiktoken'
  mv "$(find "$tmp" -name gpt2.tiktoken | head -n1)" "$assets/gpt2.tiktoken.part"
  mv "$assets/gpt2.tiktoken.part" "$assets/gpt2.tiktoken"
  rm -rf "$tmp"
fi
if [ ! -s "$assets/jargon.txt" ]; then
  say "unpacking the default corpus (The Jargon File, Debian's jargon-text)"
  gzip -dc /usr/share/doc/jargon-text/jargon.txt.gz > "$assets/jargon.txt.part"
  mv "$assets/jargon.txt.part" "$assets/jargon.txt"
fi
