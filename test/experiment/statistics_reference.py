"""Independent reference values for test/experiment/Statistics.test.ts.

Run: python3 test/experiment/statistics_reference.py
Needs numpy and scipy. Written separately from src/experiment/Statistics.ts: the PRNG is
re-implemented from its definition (splitmix32 seeding xoshiro128**), the resampling draws the
same indices (floor(u * n)), and the percentiles come from numpy (linear, type 7). The t
quantiles and the upper bound come from scipy.
"""
import math
import numpy as np
from scipy import stats

M32 = 0xFFFFFFFF


def seeded_uniform(seed):
    sm = seed & M32

    def splitmix32():
        nonlocal sm
        sm = (sm + 0x9E3779B9) & M32
        z = sm
        z = ((z ^ (z >> 16)) * 0x85EBCA6B) & M32
        z = ((z ^ (z >> 13)) * 0xC2B2AE35) & M32
        return (z ^ (z >> 16)) & M32

    s = [splitmix32() for _ in range(4)]

    def rotl(x, k):
        return ((x << k) | (x >> (32 - k))) & M32

    def nxt():
        s0, s1, s2, s3 = s
        result = (rotl((s1 * 5) & M32, 7) * 9) & M32
        t = (s1 << 9) & M32
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 11)
        s[:] = [s0, s1, s2, s3]
        return result / 4294967296

    return nxt


def resampled_means(values, seed, resamples):
    u = seeded_uniform(seed)
    n = len(values)
    out = []
    for _ in range(resamples):
        total = 0.0
        for _ in range(n):
            total += values[math.floor(u() * n)]
        out.append(total / n)
    return out


u = seeded_uniform(42)
print("first uniforms, seed 42:", [repr(u()) for _ in range(4)])

# Wilson 85/100 from the closed form.
z = 1.959963984540054
n, s = 100, 85
p = s / n
den = 1 + z * z / n
center = (p + z * z / (2 * n)) / den
half = z / den * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
print("wilson 85/100:", repr(center - half), repr(center + half))

# Paired bootstrap on the fixed sample of the test.
a = [1, 1, 0, 1, 0.5, 1, 1, 0, 0.8, 1, 0.25, 1, 0, 1, 0.35, 1, 0.75, 1, 0, 1]
b = [0, 1, 0.1, 1, 0, 0.5, 1, 0, 0.65, 1, 0, 1, 0, 0.2, 1, 1, 0.5, 0, 0.33, 1]
d = [x - y for x, y in zip(a, b)]
means = resampled_means(d, 2024, 2000)
print("paired difference:", repr(sum(d) / len(d)))
print("paired interval:", repr(float(np.percentile(means, 2.5))), repr(float(np.percentile(means, 97.5))))

# Bootstrap of one mean.
wall = [12.4, 8.9, 30.2, 15.5, 9.1, 22.8, 11.0, 41.7, 13.3, 10.6, 18.2]
means = resampled_means(wall, 7, 2000)
print("bootstrapMean(wall, seed 7):", repr(float(np.percentile(means, 2.5))), repr(float(np.percentile(means, 97.5))))
means = resampled_means(wall, 7, 500)
print("bootstrapMean(wall, seed 7, 500 resamples, 90%):", repr(float(np.percentile(means, 5))), repr(float(np.percentile(means, 95))))

# Student t quantiles and the one-sided upper bound.
for q, df in [(0.95, 1), (0.95, 2), (0.95, 5), (0.95, 10), (0.95, 30), (0.975, 10), (0.99, 3), (0.999, 1), (0.95, 2.5)]:
    print(f"t({q}, {df}) =", repr(float(stats.t.ppf(q, df))))
costs = [0.012, 0.034, 0.019, 0.051, 0.022, 0.017]
x = np.array(costs)
upper = x.mean() + stats.t.ppf(0.95, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
print("oneSidedUpperMean(costs, 0.95):", repr(float(upper)))
upper99 = x.mean() + stats.t.ppf(0.99, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
print("oneSidedUpperMean(costs, 0.99):", repr(float(upper99)))
