#!/usr/bin/env bash
# seam's main job on a sample workspace, on a fresh machine.
#
# Until `seam ask` lands (the agent issue), the main job is the gate's: a governed
# read of the owner's files through Toolbox::call, with the policy, path
# admission and secret scrubbing in force. The demo gives seam a throwaway owner
# home holding a copy of examples/workspace and a planted SSH key, then shows:
#   1. a read of a config file: admitted, tainted, its credentials redacted;
#   2. a read of the planted key through a symlink: refused, naming the real file;
#   3. the policy as enforced.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p seam-cli
seam="$PWD/target/release/seam"

demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
export HOME="$demo/home" SEAM_HOME="$demo/seam"
mkdir -p "$HOME/.ssh" "$HOME/project"
cp -r examples/workspace/. "$HOME/project/"
printf -- '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n' > "$HOME/.ssh/id_ed25519"
ln -s "$HOME/.ssh/id_ed25519" "$HOME/project/innocent.txt"
cd "$HOME/project"

echo "\$ seam invoke files.read '{\"path\": \"config.env\"}'"
"$seam" invoke files.read '{"path": "config.env"}' || true
echo
echo "\$ seam invoke files.read '{\"path\": \"innocent.txt\"}'    # a link to ~/.ssh/id_ed25519"
"$seam" invoke files.read '{"path": "innocent.txt"}' || echo "(exit $?: refused by policy)"
echo
echo "\$ seam policy show"
"$seam" policy show
