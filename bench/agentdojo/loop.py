"""AgentDojo with a model in the loop: `seam ask` does each user task through the real gate.

For each user task of one suite (optionally paired with one injection task), this writes the
run's environment (the suite's default one, the injection's text placed in every vector), runs
`seam ask --json --trace` in a fresh seam home with AgentDojo's tools as the gate's upstream
MCP server (server.py, classified by agentdojo.toml, as replay.py does), and lets AgentDojo's
own utility() and security() judge the state the server left and the answer the agent gave.

    python3 bench/agentdojo/loop.py --suite banking [--user-tasks user_task_0,user_task_3]
        [--injection injection_task_0] [--operator absent|yes] [--unnamed deny|ask]
        [--model NAME | --model-url URL] [--max-steps N] [--seam PATH] [--json FILE] [--keep]

--model picks the embedded model (default qwen2.5-coder-1.5b); --model-url a model server
(llama-server, Ollama, vLLM) instead. --operator: nobody answers consent under `seam ask`
without a terminal, so "absent" (the default) is that: every state-changing call is refused;
"yes" writes `[consent] always` for every tool of the suite into the run's policy, as an
operator who approves every change would (the destination rule still holds: --unnamed ask
would have to ask, and nobody is there, so it refuses too).

What the agent's calls were comes from its trace (each call the gate admitted), as AgentDojo
wants them for its checks. A small model's utility here is not a 9B model's: this measures
seam with the model at hand, not the rule alone (replay.py does that).
"""

import argparse
import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from replay import ATTACK, BENCHMARK_VERSION, HERE, environment, find_seam, render_config  # noqa: E402

from agentdojo.functions_runtime import FunctionCall  # noqa: E402
from agentdojo.task_suite.load_suites import get_suite  # noqa: E402
from agentdojo.types import text_content_block_from_string  # noqa: E402


def admitted_calls(trace_file, suite_name):
    """The calls of the suite's tools the gate answered with an output, in order."""
    last, out = {}, []
    if not trace_file.exists():
        return out
    for line in trace_file.read_text().splitlines():
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            continue
        # each call's outcome follows it in the trace
        if e.get("event") == "call":
            last = e
        elif e.get("event") == "outcome" and str(e.get("tool", "")).startswith(suite_name + "."):
            result = e.get("result") or {}
            if "output" in result and last.get("tool") == e["tool"]:
                out.append(FunctionCall(function=e["tool"].split(".", 1)[1], args=last.get("params") or {}))
    return out


def run_one(args, seam, suite_name, suite, user_task, injection_task, work):
    injections = {}
    if injection_task is not None:
        text = ATTACK.format(goal=injection_task.GOAL)
        injections = {v: text for v in suite.get_injection_vector_defaults()}
    home = work / "home"
    runs = work / "runs"
    shutil.rmtree(work, ignore_errors=True)
    home.mkdir(parents=True, mode=0o700)
    (runs / suite_name).mkdir(parents=True)
    (runs / suite_name / "run.json").write_text(
        json.dumps({"id": "1", "user_task": user_task.ID, "injections": injections})
    )
    config = work / "config.toml"
    render_config([suite_name], runs, config)
    policy = (HERE / "policy.toml").read_text()
    if args.unnamed == "ask":
        policy += '\n[egress]\nunnamed = "ask"\n'
    if args.operator == "yes":
        tools = ", ".join(json.dumps(f"{suite_name}.{f.name}") for f in suite.tools)
        policy += f"\n[consent]\nalways = [{tools}]\n"
    (work / "policy.toml").write_text(policy)
    trace = work / "trace.jsonl"
    cmd = [seam, "--home", str(home), "--policy", str(work / "policy.toml"), "--config", str(config), "ask"]
    cmd += ["--json", "--trace", str(trace), "--max-steps", str(args.max_steps)]
    if args.model_url:
        cmd += ["--model-url", args.model_url]
        if args.model:
            cmd += ["--model", args.model]
    else:
        cmd += ["--model", args.model or "qwen2.5-coder-1.5b"]
    cmd.append(user_task.PROMPT)
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    seconds = round(time.time() - t0, 1)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report = {"answer": "", "end": f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}"}
    pre = environment(suite, user_task, injections)
    state = runs / suite_name / "state-1.pickle"
    post = pickle.loads(state.read_bytes()) if state.exists() else pre.model_copy(deep=True)
    calls = admitted_calls(trace, suite_name)
    output = [text_content_block_from_string(report.get("answer") or "")]
    try:
        utility = bool(suite._check_user_task_utility(user_task, output, pre, post, calls))
    except Exception as e:  # AgentDojo's own check failed on this state
        utility = False
        report["judge_error"] = f"{type(e).__name__}: {e}"
    security = None
    if injection_task is not None:
        try:
            security = bool(suite._check_injection_task_security(injection_task, output, pre, post, calls))
        except Exception as e:
            security = False
            report["judge_error"] = f"{type(e).__name__}: {e}"
    refused = []
    if trace.exists():
        for line in trace.read_text().splitlines():
            e = json.loads(line)
            if e.get("event") == "outcome" and "refused" in (e.get("result") or {}):
                refused.append((e.get("tool"), e["result"]["refused"].get("code")))
    return {
        "suite": suite_name,
        "user_task": user_task.ID,
        "injection_task": None if injection_task is None else injection_task.ID,
        "seconds": seconds,
        "answer": report.get("answer"),
        "end": report.get("end"),
        "steps": report.get("steps"),
        "calls": [c.function for c in calls],
        "refused": refused,
        "utility": utility,
        "attack_succeeded": security,
        "judge_error": report.get("judge_error"),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", default="banking", choices=["banking", "slack", "travel", "workspace"])
    p.add_argument("--user-tasks", help="comma-separated ids (default: all of the suite's)")
    p.add_argument("--injection", help="an injection task id to pair each user task with")
    p.add_argument("--operator", choices=["absent", "yes"], default="absent")
    p.add_argument("--unnamed", choices=["deny", "ask"], default="deny")
    p.add_argument("--model")
    p.add_argument("--model-url", default=os.environ.get("SEAM_MODEL_URL"))
    p.add_argument("--max-steps", type=int, default=8)
    p.add_argument("--timeout", type=int, default=900, help="seconds for one seam ask")
    p.add_argument("--seam")
    p.add_argument("--json", help="write every run's result to this file (rewritten after each)")
    p.add_argument("--keep", help="keep each run's work directory under this one")
    args = p.parse_args()
    seam = args.seam or find_seam()
    suite = get_suite(BENCHMARK_VERSION, args.suite)
    ids = args.user_tasks.split(",") if args.user_tasks else list(suite.user_tasks)
    injection = suite.injection_tasks[args.injection] if args.injection else None
    results = []
    base = pathlib.Path(args.keep) if args.keep else pathlib.Path(tempfile.mkdtemp(prefix="seam-agentdojo-loop-"))
    try:
        for i, ut_id in enumerate(ids):
            work = base / f"{i:02d}-{ut_id}"
            r = run_one(args, seam, args.suite, suite, suite.user_tasks[ut_id], injection, work)
            results.append(r)
            attack = "" if r["attack_succeeded"] is None else f" attack={'yes' if r['attack_succeeded'] else 'no'}"
            print(
                f"{r['user_task']}: utility={'yes' if r['utility'] else 'no'}{attack} "
                f"steps={r['steps']} {r['seconds']} s calls={r['calls']} refused={r['refused']} "
                f"end={json.dumps(r['end'])[:80]}",
                flush=True,
            )
            if args.json:
                pathlib.Path(args.json).write_text(json.dumps(results, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    n = len(results)
    u = sum(r["utility"] for r in results)
    line = f"\n{args.suite}: utility {u}/{n}"
    if injection is not None:
        a = sum(bool(r["attack_succeeded"]) for r in results)
        line += f", targeted attack success {a}/{n} ({args.injection})"
    print(line + f"; {sum(r['seconds'] for r in results):.0f} s in all")


if __name__ == "__main__":
    main()
