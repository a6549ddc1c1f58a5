"""
Upstream's BFCL checker, timed the way bench/bfcl-pass.ts times assay's (run by bench/bfcl.ts).

    python bench/upstream/bfcl_checker.py GORILLA_DIR DATA_DIR MODE [PASSES]

GORILLA_DIR is a checkout of ShishirPatil/gorilla's berkeley-function-call-leaderboard folder (the
one holding bfcl_eval/); DATA_DIR is assay's data folder (bfcl/v4/ and bfcl/oracle/verdicts-dev.jsonl).
Each answer of the dev oracle corpus goes through upstream's own per-entry functions of
bfcl_eval/eval_checker/eval_runner.py, as the oracle's verdicts were made: _evaluate_single_ast_entry
(format check, then ast_checker) or _evaluate_single_relevance_entry, with a handler whose decode_ast
gives back the recorded answer (or raises the recorded decode error), language Python, model
gorilla-openfunctions-v2. Upstream always builds its error texts, so every pass makes them.

MODE `line`: each pass parses every corpus line (json.loads, tuples as Python tuples) and checks it.
MODE `parsed`: the corpus parsed first (timed apart), then each pass checks the parsed answers.
Prints one JSON line: the passes' wall and CPU ms, the parse's, how many verdicts agree with the
corpus's (valid and error_type), and which packages were stood in for (stubs.py).
"""
import json
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
gorilla, data_dir, mode = sys.argv[1], sys.argv[2], sys.argv[3]
passes = int(sys.argv[4]) if len(sys.argv) > 4 else 9
sys.path.insert(0, here)
sys.path.insert(1, gorilla)

import stubs  # noqa: E402

# Imported at module level by bfcl_eval (model SDKs, tree-sitter for Java/JS, progress bars,
# file locks, tabulation); none is called on the Python checker's path.
stubs.install([
    "anthropic", "tree_sitter", "tree_sitter_java", "tree_sitter_javascript", "filelock", "tenacity",
    "overrides", "cohere", "openai", "google", "httpx", "mistralai", "qwen_agent", "writerai",
    "datamodel_code_generator", "pandas", "tqdm", "boto3", "huggingface_hub", "typer", "tabulate",
])

from bfcl_eval.constants.enums import Language, ReturnFormat  # noqa: E402
from bfcl_eval.eval_checker.eval_runner import (  # noqa: E402
    _evaluate_single_ast_entry,
    _evaluate_single_relevance_entry,
)
from bfcl_eval.utils import load_file  # noqa: E402

MODEL = "gorilla-openfunctions-v2"
RELEVANCE = {"irrelevance", "live_irrelevance", "live_relevance"}


def tuples(obj):
    # The corpus writes a Python tuple as {"__tuple__": [...]} (its README).
    if len(obj) == 1 and "__tuple__" in obj:
        return tuple(obj["__tuple__"])
    return obj


def load(line):
    # The hook only where a tuple may be: a Python call per object would slow json.loads down.
    return json.loads(line, object_hook=tuples) if '"__tuple__"' in line else json.loads(line)


class Recorded:
    """A handler whose decode_ast is the recorded decoding (set per answer)."""

    def __init__(self):
        self.decoded = None
        self.error = None

    def decode_ast(self, result, language=None, has_tool_call_tag=False):
        if self.error is not None:
            raise Exception(self.error)
        return self.decoded


v4 = os.path.join(data_dir, "bfcl", "v4")
questions = {}
answers = {}
for name in sorted(os.listdir(v4)):
    if not name.startswith("BFCL_v4_") or "multi_turn" in name:
        continue
    for entry in load_file(os.path.join(v4, name), use_lock=False):
        questions[entry["id"]] = entry
    possible = os.path.join(v4, "possible_answer", name)
    if os.path.exists(possible):
        for entry in load_file(possible, use_lock=False):
            answers[entry["id"]] = entry["ground_truth"]

with open(os.path.join(data_dir, "bfcl", "oracle", "verdicts-dev.jsonl"), encoding="utf-8") as f:
    lines = [line for line in f.read().split("\n") if line]

handler = Recorded()


def grade(record):
    category = record["category"]
    answer = record["answer"]
    prompt = questions[record["id"]]
    if category in RELEVANCE:
        handler.decoded = answer.get("decoded")
        handler.error = answer.get("decode_error")
        return _evaluate_single_relevance_entry(handler, record["id"], answer, prompt, MODEL, category)
    handler.decoded = answer
    handler.error = None
    return _evaluate_single_ast_entry(
        handler, record["id"], answer, answers[record["id"]], prompt, MODEL, category,
        Language.PYTHON, ReturnFormat.PYTHON,
    )


def timed(f):
    wall, cpu = time.perf_counter(), time.process_time()
    f()
    return {"wallMs": (time.perf_counter() - wall) * 1000, "cpuMs": (time.process_time() - cpu) * 1000}


sink = 0
verdicts = []


def check_all(records):
    global sink
    verdicts.clear()
    for record in records:
        result = grade(record)
        if result["valid"]:
            sink += 1
        for e in result.get("error", ()):
            sink += len(e) if isinstance(e, str) else 1
        verdicts.append((result["valid"], result.get("error_type")))


parse = None
records = []
if mode == "line":
    def one_pass():
        check_all(load(line) for line in lines)
else:
    def parse_all():
        records.extend(load(line) for line in lines)
    parse = timed(parse_all)

    def one_pass():
        check_all(records)

times = [timed(one_pass) for _ in range(passes)]
expected = [json.loads(line) for line in lines]
agree = sum(1 for (valid, kind), e in zip(verdicts, expected) if valid == e["valid"] and kind == e["error_type"])
print(json.dumps({
    "mode": mode, "answers": len(verdicts), "agree": agree, "parse": parse, "passes": times,
    "stubbed": sorted({m.split(".")[0] for m in stubs.stubbed}), "sink": sink,
}))
