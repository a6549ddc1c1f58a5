/**
 * `x ** y` for floats as C's `pow` gives it (correctly rounded), which JS's `**` is not for
 * every input (`2 ** 1.5` differs in the last digit). Computed in fixed point over BigInt.
 */

const W = 120
const WB = BigInt(W)
const ONE = 1n << WB

const bitLen = (n: bigint): number => (n === 0n ? 0 : n.toString(2).length)

// ln 2 with W fractional bits: 2·atanh(1/3)
const LN2 = (() => {
  let power = ONE / 3n
  let sum = power
  for (let k = 3n; power !== 0n; k += 2n) {
    power /= 9n
    sum += power / k
  }
  return 2n * sum
})()

/** A positive finite double as m·2^e. */
const split = (x: number): { m: bigint; e: number } => {
  let e = 0
  let m = x
  while (!Number.isInteger(m)) {
    m *= 2
    e--
  }
  return { m: BigInt(m), e }
}

const lnFixed = (x: number): bigint => {
  const { m, e } = split(x)
  const bc = bitLen(m)
  const k = e + bc - 1
  const shift = W - (bc - 1)
  const y = shift >= 0 ? m << BigInt(shift) : m >> BigInt(-shift)
  const z = ((y - ONE) << WB) / (y + ONE)
  const z2 = (z * z) >> WB
  let term = z
  let sum = z
  for (let n = 3n; term !== 0n; n += 2n) {
    term = (term * z2) >> WB
    sum += term / n
  }
  return 2n * sum + BigInt(k) * LN2
}

/** x^y for x > 0, both finite; Infinity or 0 beyond the double range. */
export const correctPow = (x: number, y: number): number => {
  if (y === 0 || x === 1) return 1
  if (y === 1) return x
  if (y === 2) return x * x
  // t = y · ln x, exactly y's binary value times ln x
  const { m, e } = split(Math.abs(y))
  let t = lnFixed(x) * m
  t = e >= 0 ? t << BigInt(e) : t >> BigInt(-e)
  if (y < 0) t = -t
  // t = k·ln2 + r with |r| <= ln2/2
  let k = t / LN2
  let r = t - k * LN2
  if (r > LN2 / 2n) {
    r -= LN2
    k += 1n
  } else if (r < -LN2 / 2n) {
    r += LN2
    k -= 1n
  }
  if (k > 1100n) return Infinity
  if (k < -1200n) return 0
  let term = ONE
  let sum = ONE
  for (let n = 1n; term !== 0n; n++) {
    term = (term * r) / (n * ONE)
    sum += term
  }
  // sum / 2^W · 2^k: Number() rounds once, the power-of-two scaling is exact in the normal range
  const scale = Number(k) - W
  const v = Number(sum)
  return scale < -1000 ? v * 2 ** -1000 * 2 ** (scale + 1000) : v * 2 ** scale
}
