/** -1, 0 or 1 as version a is older than, the same as, or newer than version b ("1.2.3"). */
export function compareVersions(a, b) {
  const pa = a.split(".")
  const pb = b.split(".")
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? "0"
    const y = pb[i] ?? "0"
    if (x < y) return -1
    if (x > y) return 1
  }
  return 0
}

/** The newest of a non-empty list of versions. */
export function latest(versions) {
  return versions.reduce((best, v) => (compareVersions(v, best) > 0 ? v : best))
}
