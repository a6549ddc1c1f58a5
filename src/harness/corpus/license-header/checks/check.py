import os
import sys

root = sys.argv[1]
header = "# SPDX-License-Identifier: MIT"
want = {
    "pkg/__init__.py": header + "\nimport os\n\nVALUE = 1\n",
    "pkg/sub/deep.py": header + "\ndef f():\n    return 2\n",
    "pkg/notes.md": "not python\n",
    "setup.py": "x = 1\n",
}
for rel, content in want.items():
    got = open(os.path.join(root, rel)).read()
    if got.rstrip("\n") != content.rstrip("\n"):
        print(f"{rel} is {got!r}")
        sys.exit(1)
tool = open(os.path.join(root, "pkg/tool.py")).read().splitlines()
if tool[:3] != ["#!/usr/bin/env python3", header, 'print("tool")']:
    print(f"pkg/tool.py starts {tool[:3]} (the shebang must stay first)")
    sys.exit(1)
print("headers added exactly where needed")
