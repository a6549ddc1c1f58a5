import json
import sys

text = open(sys.argv[2]).read()
start = text.find("{")
try:
    plan = json.JSONDecoder().raw_decode(text[start:])[0]
except Exception as e:  # noqa: BLE001
    print(f"answer holds no JSON object: {e}")
    sys.exit(1)
subtasks = plan.get("subtasks", [])
modules = sorted(str(s.get("module", "")).strip("/").lower() for s in subtasks)
if modules != ["auth", "billing", "notifications"]:
    print(f"modules {modules}, want one subtask per module auth, billing, notifications")
    sys.exit(1)
ids = [s.get("id") for s in subtasks]
if sorted(map(str, plan.get("order", []))) != sorted(map(str, ids)):
    print("order does not list each subtask id once")
    sys.exit(1)
if any(len(str(s.get("goal", ""))) < 10 for s in subtasks):
    print("a subtask has no real goal")
    sys.exit(1)
print("one subtask per module, ordered")
