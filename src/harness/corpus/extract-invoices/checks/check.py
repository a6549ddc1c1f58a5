import json
import os
import sys

with open(os.path.join(sys.argv[1], "invoices.json")) as f:
    data = json.load(f)
want = {"INV-1001": ("acme tools", 1250.00), "INV-1002": ("blue harbor ltd", 310.50), "INV-1003": ("nordlicht gmbh", 89.99)}
got = {i["number"]: (str(i["customer"]).strip().lower(), float(i["total"])) for i in data["invoices"]}
if set(got) != set(want):
    print(f"invoice numbers {sorted(got)} != {sorted(want)}")
    sys.exit(1)
for k, (customer, total) in want.items():
    if got[k][0] != customer or abs(got[k][1] - total) > 0.005:
        print(f"{k}: got {got[k]}, want {(customer, total)}")
        sys.exit(1)
if abs(float(data["grand_total"]) - 1650.49) > 0.005:
    print(f"grand_total {data['grand_total']} != 1650.49")
    sys.exit(1)
print("all invoices extracted")
