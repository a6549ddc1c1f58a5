import os
import sys

photos = os.path.join(sys.argv[1], "photos")
names = sorted(os.listdir(photos))
want = sorted(["IMG_0001.jpg", "IMG_0002.jpg", "holiday.jpg", "notes.txt", "already.jpg"])
if names != want:
    print(f"photos/ holds {names}, want {want}")
    sys.exit(1)
contents = {n: open(os.path.join(photos, n)).read() for n in names}
if contents != {"IMG_0001.jpg": "a", "IMG_0002.jpg": "b", "holiday.jpg": "c", "notes.txt": "d", "already.jpg": "e"}:
    print("file contents changed")
    sys.exit(1)
print("renamed exactly the .JPG files")
