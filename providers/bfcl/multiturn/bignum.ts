/**
 * The two MathAPI results that are not floats: `Decimal(number).sqrt()` under a context precision
 * (exact digits, Python's `decimal` algorithm and its `str`), and mpmath's `log(value) / log(base)`
 * at `mp.dps = precision`.
 */
import { float, isInt, isNumber, num, type Py, PyError, PyFloat, PyOpaque, typeError, typeName } from "./py.ts"

/** The exact decimal of an int or float: coefficient digits and exponent, as `Decimal(x)` makes it. */
const exactDecimal = (x: number, isFloat: boolean): { sign: boolean; coeff: bigint; exp: number } => {
  const sign = x < 0 || Object.is(x, -0)
  const a = Math.abs(x)
  if (!isFloat || Number.isInteger(a)) return { sign, coeff: BigInt(a), exp: 0 }
  // a = m / 2^k with m odd: m * 5^k / 10^k
  let k = 0
  let m = a
  while (!Number.isInteger(m)) {
    m *= 2
    k++
  }
  return { sign, coeff: BigInt(m) * 5n ** BigInt(k), exp: -k }
}

const digitsOf = (n: bigint): number => n.toString().length

const decimalStr = (sign: boolean, coeff: bigint, exp: number): string => {
  const c = coeff.toString()
  const leftdigits = exp + c.length
  const dotplace = exp <= 0 && leftdigits > -6 ? leftdigits : 1
  let intpart: string
  let fracpart: string
  if (dotplace <= 0) {
    intpart = "0"
    fracpart = "." + "0".repeat(-dotplace) + c
  } else if (dotplace >= c.length) {
    intpart = c + "0".repeat(dotplace - c.length)
    fracpart = ""
  } else {
    intpart = c.slice(0, dotplace)
    fracpart = "." + c.slice(dotplace)
  }
  const e = leftdigits === dotplace ? "" : `E${leftdigits - dotplace >= 0 ? "+" : ""}${leftdigits - dotplace}`
  return (sign ? "-" : "") + intpart + fracpart + e
}

/** Rounds coeff × 10^exp to prec digits, half to even (`Decimal._fix` without exponent limits). */
const fix = (coeff: bigint, exp: number, prec: number): [bigint, number] => {
  const d = digitsOf(coeff)
  if (d <= prec) return [coeff, exp]
  const drop = BigInt(10) ** BigInt(d - prec)
  let q = coeff / drop
  const r = coeff % drop
  const half = drop / 2n
  if (r > half || (r === half && q % 2n === 1n)) q += 1n
  let e = exp + (d - prec)
  if (digitsOf(q) > prec) {
    q /= 10n
    e += 1
  }
  return [q, e]
}

/** `getcontext().prec = precision; Decimal(number).sqrt()` for a number known not to be negative. */
export const decimalSqrt = (number: Py, precision: Py): Py => {
  if (!isInt(precision)) throw typeError(`'${typeName(precision)}' object cannot be interpreted as an integer`)
  const prec = num(precision)
  if (prec < 1) throw new PyError("ValueError", "valid range for prec is [1, MAX_PREC]")
  if (!isNumber(number)) throw typeError(`conversion from ${typeName(number)} to Decimal is not supported`)
  const x = num(number)
  if (Number.isNaN(x)) return new PyOpaque("Decimal('NaN')", "Decimal")
  if (x === Infinity) return new PyOpaque("Decimal('Infinity')", "Decimal")
  const { sign, coeff, exp } = exactDecimal(x, number instanceof PyFloat)
  if (coeff === 0n) return new PyOpaque(`Decimal('${decimalStr(sign, 0n, exp >> 1)}')`, "Decimal")
  const p = prec + 1
  let e = exp >> 1
  let c: bigint
  let l: number
  const len = digitsOf(coeff)
  if (exp & 1) {
    c = coeff * 10n
    l = (len >> 1) + 1
  } else {
    c = coeff
    l = (len + 1) >> 1
  }
  const shift = p - l
  let exact: boolean
  if (shift >= 0) {
    c *= 100n ** BigInt(shift)
    exact = true
  } else {
    const d = 100n ** BigInt(-shift)
    exact = c % d === 0n
    c /= d
  }
  e -= shift
  let n = 10n ** BigInt(p)
  for (;;) {
    const q = c / n
    if (n <= q) break
    n = (n + q) >> 1n
  }
  exact = exact && n * n === c
  if (exact) {
    if (shift >= 0) n /= 10n ** BigInt(shift)
    else n *= 10n ** BigInt(-shift)
    e += shift
  } else if (n % 5n === 0n) n += 1n
  const [rc, re] = fix(n, e, prec)
  return new PyOpaque(`Decimal('${decimalStr(false, rc, re)}')`, "Decimal")
}

/** `mpmath.mp.dps = precision; mpmath.log(value) / mpmath.log(base)`; only approximated yet. */
export const mpLogRatio = (value: Py, base: Py, precision: Py): Py => {
  if (!isNumber(value) || !isNumber(base) || !isInt(precision)) return float(NaN)
  return new PyOpaque(`mpf('${Math.log(num(value)) / Math.log(num(base))}')`, "mpf")
}
