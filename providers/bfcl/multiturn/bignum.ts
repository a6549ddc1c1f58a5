/**
 * The two MathAPI results that are not floats: `Decimal(number).sqrt()` under a context precision
 * (exact digits, Python's `decimal` algorithm and its `str`), and mpmath's `log(value) / log(base)`
 * at `mp.dps = precision`.
 */
import { isInt, isNumber, num, type Py, PyDict, PyError, PyFloat, PyOpaque, pyRepr, typeError, typeName } from "./py.ts"

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

// ---------------------------------------------------------------------------------------------
// mpmath: binary floating point of `prec` bits, round to nearest (ties to even)

type Mpf =
  | { readonly kind: "finite"; readonly neg: boolean; readonly man: bigint; readonly exp: number }
  | { readonly kind: "zero" | "inf" | "-inf" | "nan" }

const ZERO: Mpf = { kind: "zero" }

const bitLen = (n: bigint): number => (n === 0n ? 0 : n.toString(2).length)

/** `normalize`: man·2^exp rounded to prec bits, nearest or toward zero, mantissa made odd. */
const normalize = (neg: boolean, man: bigint, exp: number, prec: number, down = false): Mpf => {
  if (man === 0n) return ZERO
  const bc = bitLen(man)
  if (bc > prec) {
    const shift = BigInt(bc - prec)
    let q = man >> shift
    const rem = man & ((1n << shift) - 1n)
    const half = 1n << (shift - 1n)
    if (!down && (rem > half || (rem === half && (q & 1n) === 1n))) q += 1n
    man = q
    exp += bc - prec
  }
  while ((man & 1n) === 0n) {
    man >>= 1n
    exp += 1
  }
  return { kind: "finite", neg, man, exp }
}

const fromNumber = (x: number, isFloat: boolean): Mpf => {
  if (Number.isNaN(x)) return { kind: "nan" }
  if (x === Infinity) return { kind: "inf" }
  if (x === -Infinity) return { kind: "-inf" }
  if (x === 0) return ZERO
  const { coeff, exp } = exactBinary(Math.abs(x), isFloat)
  return normalize(x < 0, coeff, exp, Number.MAX_SAFE_INTEGER)
}

// A double as m·2^e with integer m
const exactBinary = (a: number, isFloat: boolean): { coeff: bigint; exp: number } => {
  if (!isFloat || Number.isInteger(a)) return { coeff: BigInt(a), exp: 0 }
  let k = 0
  let m = a
  while (!Number.isInteger(m)) {
    m *= 2
    k++
  }
  return { coeff: BigInt(m), exp: -k }
}

const atanhInv = (n: bigint, w: bigint): bigint => {
  // atanh(1/n) with w fractional bits
  const one = 1n << w
  let power = one / n
  const n2 = n * n
  let sum = power
  for (let k = 3n; power !== 0n; k += 2n) {
    power /= n2
    sum += power / k
  }
  return sum
}

const atanInv = (n: bigint, w: bigint): bigint => {
  const one = 1n << w
  let power = one / n
  const n2 = n * n
  let sum = power
  let sign = -1n
  for (let k = 3n; power !== 0n; k += 2n) {
    power /= n2
    sum += (sign * power) / k
    sign = -sign
  }
  return sum
}

/** ln(x) of a positive finite value as a fixed-point number with w fractional bits. */
const lnFixed = (x: Extract<Mpf, { kind: "finite" }>, w: number): bigint => {
  const W = BigInt(w)
  const one = 1n << W
  // x = y·2^k with y in [1, 2)
  const bc = bitLen(x.man)
  const k = x.exp + bc - 1
  const shift = w - (bc - 1)
  const y = shift >= 0 ? x.man << BigInt(shift) : x.man >> BigInt(-shift)
  const z = ((y - one) << W) / (y + one)
  const z2 = (z * z) >> W
  let term = z
  let sum = z
  for (let n = 3n; term !== 0n; n += 2n) {
    term = (term * z2) >> W
    sum += term / n
  }
  const ln2 = 2n * atanhInv(3n, W)
  return 2n * sum + BigInt(k) * ln2
}

const fromFixed = (v: bigint, w: number, prec: number): Mpf => (v === 0n ? ZERO : normalize(v < 0n, v < 0n ? -v : v, -w, prec))

const mpfLog = (x: Extract<Mpf, { kind: "finite" }>, prec: number): Mpf => {
  if (x.man === 1n && x.exp === 0) return ZERO
  const w = prec + bitLen(BigInt(Math.abs(x.exp) + bitLen(x.man))) + 80
  return fromFixed(lnFixed(x, w), w, prec)
}

const mpfPi = (prec: number): Mpf => {
  const w = prec + 80
  const W = BigInt(w)
  return fromFixed(16n * atanInv(5n, W) - 4n * atanInv(239n, W), w, prec)
}

class ZeroDivision extends Error {}

const sign = (x: Mpf): number => (x.kind === "finite" ? (x.neg ? -1 : 1) : x.kind === "inf" ? 1 : x.kind === "-inf" ? -1 : 0)

const mpfDiv = (s: Mpf, t: Mpf, prec: number): Mpf => {
  if (s.kind !== "finite" || t.kind !== "finite") {
    if (s.kind === "zero") {
      if (t.kind === "zero") throw new ZeroDivision()
      if (t.kind === "nan") return { kind: "nan" }
      return ZERO
    }
    if (t.kind === "zero") throw new ZeroDivision()
    const sSpecial = s.kind !== "finite"
    const tSpecial = t.kind !== "finite"
    if (sSpecial && tSpecial) return { kind: "nan" }
    if (s.kind === "nan" || t.kind === "nan") return { kind: "nan" }
    if (!tSpecial) return sign(s) * sign(t) > 0 ? { kind: "inf" } : { kind: "-inf" }
    return ZERO
  }
  const neg = s.neg !== t.neg
  let extra = prec - bitLen(s.man) + bitLen(t.man) + 5
  if (extra < 5) extra = 5
  const num = s.man << BigInt(extra)
  let quot = num / t.man
  const rem = num % t.man
  if (rem !== 0n) {
    quot = (quot << 1n) + 1n
    extra += 1
  }
  return normalize(neg, quot, s.exp - t.exp - extra, prec)
}

const mpfMul = (a: Mpf, b: Mpf): Mpf => {
  if (a.kind !== "finite" || b.kind !== "finite") return a.kind === "zero" || b.kind === "zero" ? ZERO : { kind: "nan" }
  return normalize(a.neg !== b.neg, a.man * b.man, a.exp + b.exp, Number.MAX_SAFE_INTEGER)
}

/** a + b rounded toward zero to prec bits (mpmath's `round_fast`). */
const mpfAddDown = (a: Mpf, b: Mpf, prec: number): Mpf => {
  if (a.kind === "zero") return b.kind === "finite" ? normalize(b.neg, b.man, b.exp, prec, true) : b
  if (b.kind === "zero") return a.kind === "finite" ? normalize(a.neg, a.man, a.exp, prec, true) : a
  if (a.kind !== "finite" || b.kind !== "finite") return { kind: "nan" }
  const e = Math.min(a.exp, b.exp)
  const va = (a.neg ? -1n : 1n) * (a.man << BigInt(a.exp - e))
  const vb = (b.neg ? -1n : 1n) * (b.man << BigInt(b.exp - e))
  const v = va + vb
  return v === 0n ? ZERO : normalize(v < 0n, v < 0n ? -v : v, e, prec, true)
}

const mpfNeg = (a: Mpf): Mpf =>
  a.kind === "finite" ? { ...a, neg: !a.neg } : a.kind === "inf" ? { kind: "-inf" } : a.kind === "-inf" ? { kind: "inf" } : a

/** mpmath's `to_str(x, dps)`. */
const mpfStr = (x: Mpf, dps: number): string => {
  switch (x.kind) {
    case "zero":
      return dps ? "0.0" : ".0"
    case "inf":
      return "+inf"
    case "-inf":
      return "-inf"
    case "nan":
      return "nan"
  }
  const minFixed = Math.min(-Math.floor(dps / 3), -5)
  const maxFixed = dps
  const log2of10 = Math.log(10) / Math.log(2)
  // to_digits_exp(x, dps + 3): digits rounded toward zero
  const digitsDps = dps + 3
  const bitprec = Math.floor(digitsDps * log2of10) + 10
  const bc = bitLen(x.man)
  const fixprec = Math.max(bitprec - x.exp - bc, 0)
  const fixdps = Math.floor(fixprec / log2of10 + 0.5)
  const sh = x.exp + fixprec
  const sf = sh >= 0 ? x.man << BigInt(sh) : x.man >> BigInt(-sh)
  const sd = (sf * 10n ** BigInt(fixdps)) >> BigInt(fixprec)
  let digits = sd.toString()
  let exponent = digits.length - fixdps - 1
  const signText = x.neg ? "-" : ""
  if (!dps) {
    if ("56789".includes(digits[0] as string)) exponent += 1
    digits = ".0"
  } else {
    if (digits.length > dps && "56789".includes(digits[dps] as string)) {
      digits = digits.slice(0, dps)
      let i = dps - 1
      while (i >= 0 && digits[i] === "9") i--
      if (i >= 0) digits = digits.slice(0, i) + String(Number(digits[i]) + 1) + "0".repeat(dps - i - 1)
      else {
        digits = "1" + "0".repeat(dps - 1)
        exponent += 1
      }
    } else digits = digits.slice(0, dps)
    let split: number
    if (minFixed < exponent && exponent < maxFixed) {
      if (exponent < 0) {
        digits = "0".repeat(-exponent) + digits
        split = 1
      } else {
        split = exponent + 1
        if (split > dps) digits += "0".repeat(split - dps)
      }
      exponent = 0
    } else split = 1
    digits = digits.slice(0, split) + "." + digits.slice(split)
    digits = digits.replace(/0+$/, "")
    if (digits.endsWith(".")) digits += "0"
  }
  if (exponent === 0 && dps) return signText + digits
  if (exponent >= 0) return `${signText}${digits}e+${exponent}`
  return `${signText}${digits}e${exponent}`
}

type Mpc = readonly [Mpf, Mpf]

/** Python's `int(v)` for the dps setter. */
const pyInt = (v: Py): number => {
  if (isInt(v)) return num(v)
  if (v instanceof PyFloat) {
    if (!Number.isFinite(v.value)) throw new PyError(Number.isNaN(v.value) ? "ValueError" : "OverflowError", Number.isNaN(v.value) ? "cannot convert float NaN to integer" : "cannot convert float infinity to integer")
    return Math.trunc(v.value)
  }
  if (typeof v === "string") {
    const t = v.trim().replaceAll("_", "")
    if (/^[+-]?\d+$/.test(t)) return Number(t)
    throw new PyError("ValueError", `invalid literal for int() with base 10: ${pyRepr(v)}`)
  }
  throw typeError(`int() argument must be a string, a bytes-like object or a real number, not '${typeName(v)}'`)
}

/** mpmath's conversion of an argument; a str is read as a decimal and rounded to prec bits. */
const toMpf = (v: Py, prec: number): Mpf => {
  if (isNumber(v)) return fromNumber(num(v), v instanceof PyFloat)
  if (typeof v === "string") {
    const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(v)
    if (m === null || (m[2] === "" && (m[3] ?? "") === "")) {
      // mpmath tries text with a "j" as a complex literal, and fails on its regex's missing match
      if (/j/i.test(v)) throw new PyError("AttributeError", "'NoneType' object has no attribute 'group'")
      throw typeError(`cannot create mpf from ${pyRepr(v)}`)
    }
    const digits = BigInt((m[2] ?? "") + (m[3] ?? "") || "0")
    const exp10 = Number(m[4] ?? "0") - (m[3] ?? "").length
    const neg = m[1] === "-"
    if (digits === 0n) return ZERO
    if (exp10 >= 0) return normalize(neg, digits * 10n ** BigInt(exp10), 0, prec)
    return mpfDiv(normalize(neg, digits, 0, Number.MAX_SAFE_INTEGER), normalize(false, 10n ** BigInt(-exp10), 0, Number.MAX_SAFE_INTEGER), prec)
  }
  throw typeError(`cannot create mpf from ${pyRepr(v)}`)
}

/** `mpmath.log(x)` at prec bits: real, or complex for a negative x. */
const mpLog = (x: Mpf, prec: number): Mpf | Mpc => {
  switch (x.kind) {
    case "zero":
      return { kind: "-inf" }
    case "inf":
      return x
    case "-inf":
      return [{ kind: "inf" }, mpfPi(prec)]
    case "nan":
      return x
  }
  if (!x.neg) return mpfLog(x, prec)
  return [mpfLog({ ...x, neg: false }, prec), mpfPi(prec)]
}

const isMpc = (v: Mpf | Mpc): v is Mpc => Array.isArray(v)

const divide = (a: Mpf | Mpc, b: Mpf | Mpc, prec: number): Mpf | Mpc => {
  if (!isMpc(a) && !isMpc(b)) return mpfDiv(a, b, prec)
  if (isMpc(a) && !isMpc(b)) return [mpfDiv(a[0], b, prec), mpfDiv(a[1], b, prec)]
  const [ar, ai] = isMpc(a) ? a : [a, ZERO]
  const [c, d] = b as Mpc
  const wp = prec + 10
  const mag = mpfAddDown(mpfMul(c, c), mpfMul(d, d), wp)
  const t = mpfAddDown(mpfMul(ar, c), mpfMul(ai, d), wp)
  const u = mpfAddDown(mpfMul(ai, c), mpfNeg(mpfMul(ar, d)), wp)
  return [mpfDiv(t, mag, prec), mpfDiv(u, mag, prec)]
}

/** `mpmath.mp.dps = precision; {"result": mpmath.log(value) / mpmath.log(base)}`, errors as `{"error": str(e)}`. */
export const mpLogRatio = (value: Py, base: Py, precision: Py): Py => {
  try {
    const dps = pyInt(precision)
    const prec = Math.max(1, roundHalfEven((dps + 1) * 3.3219280948873626))
    // What upstream printed for `precision=1e+300` (mpmath cannot work at that precision either)
    if (prec > 1e7) {
      if (isNumber(value) && num(value) < 0) throw new PyError("RecursionError", "maximum recursion depth exceeded in comparison")
      throw new PyError("ValueError", "too many digits in integer")
    }
    const precDps = Math.max(1, Math.trunc(roundHalfEven(prec / 3.3219280948873626) - 1))
    const reprDigits = precDps === 15 ? 17 : precDps + 3
    const r = divide(mpLog(toMpf(value, prec), prec), mpLog(toMpf(base, prec), prec), prec)
    const repr = isMpc(r)
      ? `mpc(real='${mpfStr(r[0], reprDigits)}', imag='${mpfStr(r[1], reprDigits)}')`
      : `mpf('${mpfStr(r, reprDigits)}')`
    return PyDict.fromRecord({ result: new PyOpaque(repr, isMpc(r) ? "mpc" : "mpf") })
  } catch (e) {
    if (e instanceof ZeroDivision) return PyDict.fromRecord({ error: "" })
    if (e instanceof PyError) return PyDict.fromRecord({ error: e.text })
    throw e
  }
}

const roundHalfEven = (x: number): number => {
  const f = Math.floor(x)
  const d = x - f
  return d > 0.5 ? f + 1 : d < 0.5 ? f : f % 2 === 0 ? f : f + 1
}
