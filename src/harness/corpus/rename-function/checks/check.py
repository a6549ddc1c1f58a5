import os
import re
import sys

root = sys.argv[1]
sys.path.insert(0, root)
from shop import pricing  # noqa: E402
from shop.cart import Cart  # noqa: E402

if not hasattr(pricing, "total_price"):
    print("shop.pricing has no total_price")
    sys.exit(1)
for name in ("pricing.py", "cart.py"):
    src = open(os.path.join(root, "shop", name)).read()
    if re.search(r"\bcalc\b", src):
        print(f"shop/{name} still mentions calc")
        sys.exit(1)
cart = Cart()
cart.add(10.0, 2)
cart.add(2.5)
if cart.total() != 27.0 or pricing.total_price([(1.0, 1)], tax_rate=0) != 1.0:
    print("behaviour changed")
    sys.exit(1)
print("renamed everywhere, behaviour kept")
