"""
Upstream's tau2 retail environment, timed the way bench/tau2.ts times assay's (run by it).

    python bench/upstream/tau2_retail.py TAU2_DIR DATA_DIR MODE [N]

TAU2_DIR is a checkout of sierra-research/tau2-bench (the folder holding src/tau2/); DATA_DIR is
assay's data folder (tau2/retail/{db.json,policy.md,tasks.json,oracle/}). Upstream reads its data
from $TAU2_DATA_DIR/tau2/domains/retail/: this script points that at a temporary folder of links
to assay's pinned files. The package's __init__ (which imports the agents, the LLM clients and
the runner) is not run: tau2's modules are imported from its folder directly, and the packages
they import but the timed functions never call are stood in for (stubs.py).

MODE `load`: get_environment() N times (default 9) in this process, each timed: the first is a
  fresh process's first, the rest warm. Each is RetailDB.load(db.json): the file read, parsed
  and validated by pydantic, then the toolkit and environment made.
MODE `gold`: for each task of tasks.json, the gold check as upstream's evaluator makes it: a
  fresh environment, the task's gold actions through make_tool_call, get_db_hash(); timed per
  task, N rounds (default 1).
MODE `fuzz`: the first N lines of oracle/fuzz-dev.jsonl (default all): a fresh environment, each
  call as a ToolCall through get_response, get_db_hash(); the whole timed, and each line's hash
  compared with the oracle's.
Prints one JSON line.
"""
import json
import os
import shutil
import sys
import tempfile
import time
import types

here = os.path.dirname(os.path.abspath(__file__))
tau2_dir, data_dir, mode = sys.argv[1], sys.argv[2], sys.argv[3]
n_arg = int(sys.argv[4]) if len(sys.argv) > 4 else None
retail = os.path.join(data_dir, "tau2", "retail")

links = tempfile.mkdtemp(prefix="assay-bench-tau2-")
try:
    domain = os.path.join(links, "tau2", "domains", "retail")
    os.makedirs(domain)
    for name in ("db.json", "policy.md", "tasks.json"):
        os.symlink(os.path.join(retail, name), os.path.join(domain, name))
    os.environ["TAU2_DATA_DIR"] = links

    sys.path.insert(0, here)
    import stubs  # noqa: E402

    # Imported at module level by the modules on the path (logging, diffing, config files,
    # docstring parsing for tool schemas); none is called by the timed functions.
    stubs.install(["loguru", "deepdiff", "toml", "addict", "docstring_parser", "litellm", "rich"])
    src = os.path.join(tau2_dir, "src", "tau2")
    package = types.ModuleType("tau2")
    package.__path__ = [src]
    sys.modules["tau2"] = package

    from tau2.data_model.message import ToolCall  # noqa: E402
    from tau2.domains.retail.environment import get_environment  # noqa: E402

    def timed(f):
        wall, cpu = time.perf_counter(), time.process_time()
        value = f()
        return value, {"ms": (time.perf_counter() - wall) * 1000, "cpuMs": (time.process_time() - cpu) * 1000}

    out = {"mode": mode}
    if mode == "load":
        out["loads"] = [timed(get_environment)[1] for _ in range(n_arg or 9)]
    elif mode == "gold":
        with open(os.path.join(retail, "tasks.json"), encoding="utf-8") as f:
            tasks = json.load(f)

        def gold(task):
            env = get_environment()
            for action in (task.get("evaluation_criteria") or {}).get("actions") or []:
                try:
                    env.make_tool_call(action["name"], requestor=action.get("requestor", "assistant"), **action["arguments"])
                except Exception:
                    pass  # as upstream's evaluator: a failing gold action is logged and skipped
            return env.get_db_hash()

        rounds = []
        for _ in range(n_arg or 1):
            rounds.append([timed(lambda: gold(task))[1]["ms"] for task in tasks])
        out["tasks"] = len(tasks)
        out["perTaskMs"] = [sorted(r[i] for r in rounds)[len(rounds) // 2] for i in range(len(tasks))]
    elif mode == "fuzz":
        with open(os.path.join(retail, "oracle", "fuzz-dev.jsonl"), encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
        lines = lines[: n_arg or len(lines)]

        def replay(line):
            env = get_environment()
            for i, action in enumerate(line["actions"]):
                env.get_response(ToolCall(id=str(i), name=action["name"], arguments=action["arguments"], requestor="assistant"))
            return env.get_db_hash()

        def run_all():
            return sum(1 for line in lines if replay(line) == line["upstream_db_hash"])

        agree, t = timed(run_all)
        out.update({"sequences": len(lines), "agree": agree, **t})
    else:
        raise SystemExit(f"unknown mode {mode}")
    out["stubbed"] = sorted({m.split(".")[0] for m in stubs.stubbed})
    print(json.dumps(out))
finally:
    shutil.rmtree(links, ignore_errors=True)
