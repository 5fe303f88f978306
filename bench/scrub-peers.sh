#!/usr/bin/env bash
# Secret scrubbing, seam against its peers, on the same labelled corpus and the same 50 MB file.
#
#   bash bench/scrub-peers.sh            (from the repository root; shared/ beside the clone)
#   CORPUS=path/to/corpus.jsonl bash bench/scrub-peers.sh
#
# Installs detect-secrets (PyPI) and, where this machine's apt has it, gitleaks; builds seam in
# release; prints recall (all of a positive's secrets gone), benign FPR (benign output altered),
# near-miss flagged and MB/s side by side. A peer that only reports findings is scored by
# removing the values it reports. Peers that cannot be installed are skipped, and say so.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CORPUS="${CORPUS:-$ROOT/../shared/bench-data/secrets/corpus-dev.jsonl}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
[ -f "$CORPUS" ] || { echo "corpus not found: $CORPUS" >&2; exit 1; }

echo "== peers"
if ! python3 -c 'import detect_secrets' 2>/dev/null; then
  python3 -m pip install --quiet detect-secrets || echo "detect-secrets: pip install failed; skipped"
fi
if ! command -v gitleaks >/dev/null 2>&1; then
  if apt-cache policy gitleaks 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get install -y -qq gitleaks >/dev/null || echo "gitleaks: apt install failed; skipped"
  else
    echo "gitleaks: not available from this machine's apt (no candidate); skipped"
  fi
fi

echo "== seam (release)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --release -q -p seam-cli 2>/dev/null || true
SEAM_BIN="$CARGO_TARGET_DIR/release/seam"
if [ -x "$SEAM_BIN" ] && echo "x" | "$SEAM_BIN" scrub >/dev/null 2>&1; then
  SEAM=("$SEAM_BIN" scrub)
  echo "using: seam scrub"
else
  cargo build --release -q -p seam-scrub --example scrub_stdin
  SEAM=("$CARGO_TARGET_DIR/release/examples/scrub_stdin")
  echo "using: the seam-scrub example scrub_stdin (seam scrub is not wired yet)"
fi

# The 50 MB file: the corpus snippets, one after another, repeated.
python3 - "$CORPUS" "$WORK/big.txt" <<'PY'
import json, sys
unit = "".join(json.loads(l)["text"] + "\n" for l in open(sys.argv[1]) if l.strip())
with open(sys.argv[2], "w") as f:
    n = 0
    while n < 50 * 2**20:
        f.write(unit)
        n += len(unit.encode())
PY

python3 - "$CORPUS" "$WORK" "${SEAM[@]}" <<'PY'
import json, os, shutil, subprocess, sys, time

corpus, work, seam = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = [json.loads(l) for l in open(corpus) if l.strip()]
big = os.path.join(work, "big.txt")
big_mb = os.path.getsize(big) / 1e6

def score(name, redact):
    """redact(text) -> text with what the tool found removed."""
    pos = pos_ok = ben = ben_fp = near = near_fl = 0
    for r in rows:
        t = r["text"]
        out = redact(t)
        if r["label"] == "pos":
            pos += 1
            pos_ok += all(s not in out for s in r["secrets"])
        elif r.get("neg_class") == "benign":
            ben += 1
            ben_fp += out != t
        else:
            near += 1
            near_fl += out != t
    return pos_ok / pos, ben_fp / ben, near_fl / max(near, 1)

def remove(text, values):
    for v in sorted(set(v for v in values if v), key=len, reverse=True):
        text = text.replace(v, "[REDACTED]")
    return text

def timed(cmd, **kw):
    t = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    return big_mb / (time.perf_counter() - t)

results = []

# seam: the output is the redacted text.
def seam_redact(t):
    return subprocess.run(seam, input=t.encode(), stdout=subprocess.PIPE, check=True).stdout.decode()
q = score("seam", seam_redact)
with open(big, "rb") as f:
    mbs = timed(seam, stdin=f)
results.append(("seam", *q, mbs))

# detect-secrets reports lines, not values (its baseline stores hashes): every line it flags
# is removed whole, which can only help its recall.
ds = shutil.which("detect-secrets")
if ds:
    snip = os.path.join(work, "snippets")
    os.makedirs(snip, exist_ok=True)
    for i, r in enumerate(rows):
        with open(os.path.join(snip, f"{i}.txt"), "w") as f:
            f.write(r["text"])
    rep = subprocess.run([ds, "scan", "--all-files", snip], stdout=subprocess.PIPE, cwd=snip).stdout
    flagged = {}
    for fname, items in json.loads(rep or b"{}").get("results", {}).items():
        flagged[int(os.path.basename(fname).split(".")[0])] = {it["line_number"] for it in items}
    def ds_redact_row(t, i):
        lines = t.split("\n")
        return "\n".join("[REDACTED]" if n + 1 in flagged.get(i, ()) else l for n, l in enumerate(lines))
    cache = {}
    for i, r in enumerate(rows):
        cache[r["text"], i] = ds_redact_row(r["text"], i)
    texts = {}
    for i, r in enumerate(rows):
        texts.setdefault(r["text"], cache[r["text"], i])
    q = score("detect-secrets", lambda t: texts[t])
    mbs = timed([ds, "scan", "--all-files", big], cwd=work)
    results.append(("detect-secrets", *q, mbs))
else:
    print("detect-secrets: not installed; skipped")

# gitleaks: remove the Secret of each finding.
gl = shutil.which("gitleaks")
if gl:
    def gl_redact(t):
        rep = os.path.join(work, "gl.json")
        subprocess.run([gl, "stdin", "--no-banner", "--report-format", "json", "--report-path", rep],
                       input=t.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            found = [f.get("Secret", "") for f in json.load(open(rep))]
        except (OSError, ValueError):
            found = []
        return remove(t, found)
    q = score("gitleaks", gl_redact)
    with open(big, "rb") as f:
        mbs = timed([gl, "stdin", "--no-banner", "--report-format", "json", "--report-path", os.devnull], stdin=f)
    results.append(("gitleaks", *q, mbs))

print()
print(f"corpus: {len(rows)} snippets; throughput file: {big_mb:.1f} MB")
print("| tool | recall (all of the secret removed) | benign FPR | near-miss flagged | MB/s |")
print("|---|---|---|---|---|")
for name, rec, fpr, nm, mbs in results:
    print(f"| {name} | {rec:.3f} | {fpr:.3f} | {nm:.3f} | {mbs:.1f} |")
PY
