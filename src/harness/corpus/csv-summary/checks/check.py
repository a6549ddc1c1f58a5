import json
import os
import sys

with open(os.path.join(sys.argv[1], "summary.json")) as f:
    data = json.load(f)
want = {"books": 49.75, "games": 79.98, "music": 9.99}
got = {k: float(v) for k, v in data["by_category"].items()}
if set(got) != set(want) or any(abs(got[k] - want[k]) > 0.005 for k in want):
    print(f"by_category {got}, want {want}")
    sys.exit(1)
if abs(float(data["total"]) - 139.72) > 0.005:
    print(f"total {data['total']}, want 139.72")
    sys.exit(1)
print("summary correct")
