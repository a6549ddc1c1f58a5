import os
import sys

root = sys.argv[1]
sys.path.insert(0, root)
from slug import slugify  # noqa: E402

cases = {
    "Hello, World!": "hello-world",
    "  Many   spaces  ": "many-spaces",
    "Already-slugged": "already-slugged",
    "Ünïcode & Co.": "unicode-co",
    "2 + 2 = 4": "2-2-4",
}
for title, want in cases.items():
    got = slugify(title)
    if got != want:
        print(f"slugify({title!r}) = {got!r}, want {want!r}")
        sys.exit(1)
print("slugify passes the hidden cases")
