import sys

sys.path.insert(0, sys.argv[1])
import stats  # noqa: E402

cases = [([3, 1, 2], 2), ([4, 1, 3, 2], 2.5), ([5], 5), ([7, 7, 1, 9, 3, 3], 5.0), ([-1, -5, 10], -1)]
for values, want in cases:
    got = stats.median(list(values))
    if abs(got - want) > 1e-9:
        print(f"median({values}) = {got}, want {want}")
        sys.exit(1)
print("median correct on all cases")
