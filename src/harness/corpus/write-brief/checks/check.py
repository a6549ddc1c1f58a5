import os
import sys

root = sys.argv[1]
path = os.path.join(root, "BRIEF.md")
if not os.path.exists(path):
    print("BRIEF.md was not written")
    sys.exit(1)
brief = open(path).read().lower()
missing = [w for w in ("slug.py", "test_slug", "unittest") if w not in brief]
if missing:
    print(f"BRIEF.md does not mention {missing}")
    sys.exit(1)
if open(os.path.join(root, "slug.py")).read() != 'def slugify(title):\n    return title.lower().replace(" ", "-")\n':
    print("the orchestrator changed slug.py itself")
    sys.exit(1)
print("brief names the file, the test and the command")
