/**
 * Upstream's `calculate` tool: `str(round(float(eval(expression)), 2))` after checking that
 * every character is one of `0123456789+-*\/(). `. Within that alphabet Python 3.11's grammar
 * allows numbers, `+ - * / // **`, parentheses, calls (`1(2)`), the empty tuple `()` and
 * Ellipsis `...`; this module evaluates exactly that language with Python's semantics (exact
 * big integers, `//` flooring, `**` binding tighter than unary minus, correctly rounded int
 * division) and reproduces the error texts Python prints, syntax errors included.
 */
import { reprFloat, round2 } from "./pyjson.ts"

const ALLOWED = "0123456789+-*/(). "

/** The tool's answer: the printed float, or the text after "Error: ". */
export type CalculateResult = { readonly ok: true; readonly output: string } | { readonly ok: false; readonly message: string }

// ---------------------------------------------------------------------------------------------
// Tokens

type TokenKind = "int" | "float" | "..." | "." | "+" | "-" | "*" | "/" | "//" | "**" | "(" | ")" | "eof"

interface Token {
  readonly kind: TokenKind
  readonly text: string
  /** Parenthesis depth after this token (a `)` counts as already closed), as CPython's tokenizer. */
  readonly level: number
}

const LEADING_ZEROS = "leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers"

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= "0" && c <= "9"

/** The tokens, or the first tokenizer error (which wins over any parser error in CPython). */
const tokenize = (src: string): { readonly tokens: ReadonlyArray<Token> } | { readonly error: string } => {
  const tokens: Array<Token> = []
  let level = 0
  let i = 0
  const push = (kind: TokenKind, text: string) => tokens.push({ kind, text, level })
  while (i < src.length) {
    const c = src[i]!
    if (c === " ") {
      i++
      continue
    }
    if (isDigit(c) || (c === "." && isDigit(src[i + 1]))) {
      const start = i
      let isFloat = false
      if (c !== ".") {
        const zeroLed = c === "0"
        let nonzero = false
        while (isDigit(src[i])) {
          if (src[i] !== "0") nonzero = true
          i++
        }
        if (src[i] !== "." && zeroLed && nonzero) return { error: LEADING_ZEROS }
      }
      if (src[i] === ".") {
        isFloat = true
        i++
        while (isDigit(src[i])) i++
      }
      push(isFloat ? "float" : "int", src.slice(start, i))
      continue
    }
    if (c === ".") {
      if (src[i + 1] === "." && src[i + 2] === ".") {
        push("...", "...")
        i += 3
      } else {
        push(".", ".")
        i++
      }
      continue
    }
    if ((c === "*" || c === "/") && src[i + 1] === c) {
      push(c === "*" ? "**" : "//", c + c)
      i += 2
      continue
    }
    if (c === "(") {
      level++
      push("(", c)
    } else if (c === ")") {
      if (level === 0) return { error: "unmatched ')'" }
      level--
      push(")", c)
    } else push(c as TokenKind, c)
    i++
  }
  push("eof", "")
  return { tokens }
}

// ---------------------------------------------------------------------------------------------
// Syntax

type Node =
  | { readonly _tag: "int"; readonly value: bigint }
  | { readonly _tag: "float"; readonly value: number }
  | { readonly _tag: "ellipsis" }
  | { readonly _tag: "tuple" }
  | { readonly _tag: "unary"; readonly op: "+" | "-"; readonly operand: Node }
  | { readonly _tag: "binary"; readonly op: "+" | "-" | "*" | "/" | "//" | "**"; readonly left: Node; readonly right: Node }
  | { readonly _tag: "call"; readonly callee: Node; readonly arg: Argument | undefined }

/** A call's one argument (there are no commas): `f(x)`, `f(*x)` or `f(**x)`. */
interface Argument {
  readonly star: "" | "*" | "**"
  readonly value: Node
}

interface Parsed {
  readonly node: Node
  readonly pos: number
}

const COMMA = "invalid syntax. Perhaps you forgot a comma?"

/**
 * A PEG parser of the grammar subset, in CPython's two passes: the first parses; if it fails,
 * the second re-parses with the `invalid_expression` rule enabled, which raises "Perhaps you
 * forgot a comma?" for two adjacent expressions inside parentheses.
 */
const parse = (tokens: ReadonlyArray<Token>): { readonly node: Node } | { readonly error: string } => {
  let secondPass = false
  let raised: string | undefined
  // Fetching the end of input with a parenthesis open is a tokenizer error, raised at once.
  const at = (pos: number): Token => {
    const t = tokens[Math.min(pos, tokens.length - 1)]!
    if (t.kind === "eof" && t.level > 0) raised ??= "'(' was never closed"
    return t
  }

  const atom = (pos: number, invalid: boolean): Parsed | null => {
    const t = at(pos)
    switch (t.kind) {
      case "int": {
        // CPython 3.11 refuses to convert decimal literals of more than 4300 digits.
        const digits = t.text.replace(/^0+/, "").length
        if (digits > 4300) {
          raised ??= `Exceeds the limit (4300 digits) for integer string conversion: value has ${digits} digits; use sys.set_int_max_str_digits() to increase the limit - Consider hexadecimal for huge integer literals to avoid decimal conversion limits.`
          return null
        }
        return { node: { _tag: "int", value: BigInt(t.text) }, pos: pos + 1 }
      }
      case "float":
        return { node: { _tag: "float", value: Number.parseFloat(t.text) }, pos: pos + 1 }
      case "...":
        return { node: { _tag: "ellipsis" }, pos: pos + 1 }
      case "(": {
        if (at(pos + 1).kind === ")") return { node: { _tag: "tuple" }, pos: pos + 2 }
        // tuple: '(' '*' bitwise_or ',' ...: there is no comma, so it fails after the operand.
        if (at(pos + 1).kind === "*") sum(pos + 2, invalid)
        if (raised !== undefined) return null
        const inner = expression(pos + 1, invalid)
        if (raised !== undefined) return null
        if (inner !== null && at(inner.pos).kind === ")") return { node: inner.node, pos: inner.pos + 1 }
        if (invalid) {
          // invalid_group: '(' starred_expression ')' and '(' '**' expression ')'.
          const star = at(pos + 1).kind
          if (star === "*" || star === "**") {
            const starred = expression(pos + 2, true)
            if (raised !== undefined) return null
            if (starred !== null && at(starred.pos).kind === ")") {
              raised = star === "*" ? "cannot use starred expression here" : "cannot use double starred expression here"
            }
          }
        }
        return null
      }
      default:
        return null
    }
  }

  const primary = (pos: number, invalid: boolean): Parsed | null => {
    let result = atom(pos, invalid)
    while (result !== null && raised === undefined && at(result.pos).kind === "(") {
      const open = result.pos
      if (at(open + 1).kind === ")") {
        result = { node: { _tag: "call", callee: result.node, arg: undefined }, pos: open + 2 }
        continue
      }
      const first = at(open + 1).kind
      const star = first === "*" || first === "**" ? first : ""
      const arg = expression(open + 1 + (star === "" ? 0 : 1), invalid)
      if (arg === null || raised !== undefined || at(arg.pos).kind !== ")") break
      result = { node: { _tag: "call", callee: result.node, arg: { star, value: arg.node } }, pos: arg.pos + 1 }
    }
    // `primary '.' NAME` looks one token past a dot before failing (there are no names here).
    if (result !== null && raised === undefined && at(result.pos).kind === ".") at(result.pos + 1)
    return raised === undefined ? result : null
  }

  const power = (pos: number, invalid: boolean): Parsed | null => {
    const base = primary(pos, invalid)
    if (base === null) return null
    if (at(base.pos).kind !== "**") return base
    const exponent = factor(base.pos + 1, invalid)
    if (exponent === null) return base
    return { node: { _tag: "binary", op: "**", left: base.node, right: exponent.node }, pos: exponent.pos }
  }

  const factor = (pos: number, invalid: boolean): Parsed | null => {
    const t = at(pos)
    if (t.kind === "+" || t.kind === "-") {
      const operand = factor(pos + 1, invalid)
      if (operand === null) return null
      return { node: { _tag: "unary", op: t.kind, operand: operand.node }, pos: operand.pos }
    }
    return power(pos, invalid)
  }

  const binaryLevel =
    (ops: ReadonlyArray<TokenKind>, next: (pos: number, invalid: boolean) => Parsed | null) =>
    (pos: number, invalid: boolean): Parsed | null => {
      let left: Parsed | null = next(pos, invalid)
      if (left === null) return null
      for (;;) {
        const op: TokenKind = at(left.pos).kind
        if (!ops.includes(op)) return left
        const right = next(left.pos + 1, invalid)
        if (right === null || raised !== undefined) return raised === undefined ? left : null
        left = { node: { _tag: "binary", op: op as "+", left: left.node, right: right.node }, pos: right.pos }
      }
    }

  const term = binaryLevel(["*", "/", "//"], factor)
  const sum = binaryLevel(["+", "-"], term)

  function expression(pos: number, invalid: boolean): Parsed | null {
    if (invalid) {
      // invalid_expression: a=disjunction b=expression_without_invalid, inside parentheses.
      const a = sum(pos, true)
      if (raised !== undefined) return null
      if (a !== null) {
        const b = sum(a.pos, false)
        if (raised !== undefined) return null
        if (b !== null && at(b.pos - 1).level > 0) {
          raised = COMMA
          return null
        }
      }
    }
    return sum(pos, invalid)
  }

  const parseAll = (): Parsed | null => {
    const e = expression(0, secondPass)
    if (e === null || raised !== undefined) return null
    return at(e.pos).kind === "eof" ? e : null
  }

  const first = parseAll()
  if (first !== null) return { node: first.node }
  if (raised === undefined) {
    secondPass = true
    parseAll()
  }
  return { error: raised ?? "invalid syntax" }
}

// ---------------------------------------------------------------------------------------------
// Values

type Value =
  | { readonly _tag: "int"; readonly value: bigint }
  | { readonly _tag: "float"; readonly value: number }
  | { readonly _tag: "complex"; readonly re: number; readonly im: number }
  | { readonly _tag: "tuple" }
  | { readonly _tag: "ellipsis" }

/** A Python exception, as its `str()`. */
class PyError {
  constructor(readonly message: string) {}
}

const typeName = (v: Value): string => v._tag
const int = (value: bigint): Value => ({ _tag: "int", value })
const flt = (value: number): Value => ({ _tag: "float", value })
const cpx = (re: number, im: number): Value => ({ _tag: "complex", re, im })

const toDouble = (v: bigint): number => {
  const x = Number(v)
  if (!Number.isFinite(x)) throw new PyError("int too large to convert to float")
  return x
}

const bitLength = (v: bigint): number => (v === 0n ? 0 : v.toString(2).length)

/** The double nearest to num/den (num >= 0, den > 0), ties to even; Infinity past the range. */
const ratioToDouble = (num: bigint, den: bigint): number => {
  if (num === 0n) return 0
  // Scale so the quotient has 55..56 bits, then round to the precision the exponent allows.
  const shift = 55 - (bitLength(num) - bitLength(den))
  const n = shift >= 0 ? num << BigInt(shift) : num
  const d = shift >= 0 ? den : den << BigInt(-shift)
  let q = n / d
  const sticky = n % d !== 0n
  const qBits = bitLength(q)
  const exponent = qBits - 1 - shift
  if (exponent >= 1024) return Infinity
  const precision = exponent >= -1022 ? 53 : Math.max(0, 53 - (-1022 - exponent))
  const drop = qBits - precision
  const half = 1n << BigInt(drop - 1)
  const rest = q & ((1n << BigInt(drop)) - 1n)
  q >>= BigInt(drop)
  if (rest > half || (rest === half && (sticky || (q & 1n) === 1n))) q += 1n
  // q * 2^(drop - shift), scaled in two steps so no intermediate overflows or underflows.
  const scale = drop - shift
  const half1 = Math.trunc(scale / 2)
  return Number(q) * 2 ** half1 * 2 ** (scale - half1)
}

/** int / int, correctly rounded as CPython's long_true_divide. */
const trueDivideInts = (a: bigint, b: bigint): number => {
  if (b === 0n) throw new PyError("division by zero")
  const negative = a < 0n !== b < 0n
  const r = ratioToDouble(a < 0n ? -a : a, b < 0n ? -b : b)
  if (!Number.isFinite(r)) throw new PyError("integer division result too large for a float")
  return negative ? -r : r
}

/** A finite nonzero double as m * 2^e with m an odd integer. */
const decompose = (x: number): readonly [bigint, number] => {
  let e = 0
  let m = Math.abs(x)
  while (!Number.isInteger(m)) {
    m *= 2
    e--
  }
  let big = BigInt(m)
  while (big > 1n && (big & 1n) === 0n) {
    big >>= 1n
    e++
  }
  return [x < 0 ? -big : big, e]
}

const FRACTION_BITS = 160n
const ONE = 1n << FRACTION_BITS

/** atanh(p/q) in fixed point, for 0 <= p/q <= 1/3. */
const atanhFixed = (p: bigint, q: bigint): bigint => {
  let term = (ONE * p) / q
  let sum = term
  const p2 = p * p
  const q2 = q * q
  for (let k = 3n; term !== 0n; k += 2n) {
    term = (term * p2) / q2
    sum += term / k
  }
  return sum
}

const LN2 = 2n * atanhFixed(1n, 3n)

/**
 * |x| ** y for finite nonzero x and finite y, correctly rounded (glibc's pow, which CPython
 * calls, is; V8's Math.pow is not always): exact for integer y, else through 160-bit logarithms.
 */
const powMagnitude = (x: number, y: number): number => {
  const [m0, e] = decompose(Math.abs(x))
  const m = m0 < 0n ? -m0 : m0
  if (Number.isInteger(y) && Math.abs(y) * bitLength(m) <= 65536 && Math.abs(y * e) <= 65536) {
    const n = Math.abs(y)
    const num = m ** BigInt(n)
    const scale = e * n
    if (y > 0) return scale >= 0 ? ratioToDouble(num << BigInt(scale), 1n) : ratioToDouble(num, 1n << BigInt(-scale))
    return scale >= 0 ? ratioToDouble(1n, num << BigInt(scale)) : ratioToDouble(1n << BigInt(-scale), num)
  }
  // ln|x| = ln f + k ln 2 with f = m / 2^(b-1) in [1, 2): ln f = 2 atanh((f - 1) / (f + 1)).
  const b = bitLength(m)
  const top = 1n << BigInt(b - 1)
  const lnx = 2n * atanhFixed(m - top, m + top) + BigInt(e + b - 1) * LN2
  const [my, ey] = decompose(y)
  const t = ey >= 0 ? (lnx * my) << BigInt(ey) : (lnx * my) >> BigInt(-ey)
  if (t > 710n * ONE) return Infinity
  if (t < -746n * ONE) return 0
  // exp(t) = exp(r) * 2^k with |r| <= ln2 / 2.
  const k = (t + LN2 / 2n) / LN2 - (t + LN2 / 2n < 0n && (t + LN2 / 2n) % LN2 !== 0n ? 1n : 0n)
  const r = t - k * LN2
  let term = ONE
  let sum = ONE
  for (let n = 1n; term !== 0n; n++) {
    term = (term * r) / (ONE * n)
    sum += term
  }
  return k >= 0n ? ratioToDouble(sum << k, ONE) : ratioToDouble(sum, ONE << -k)
}

const floorDivideInts = (a: bigint, b: bigint): bigint => {
  if (b === 0n) throw new PyError("integer division or modulo by zero")
  const q = a / b
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q
}

/** CPython's float_floor_div (via float_divmod). */
const floorDivideFloats = (vx: number, wx: number): number => {
  if (wx === 0) throw new PyError("float floor division by zero")
  let mod = vx % wx
  let div = (vx - mod) / wx
  if (mod !== 0) {
    if (wx < 0 !== mod < 0) {
      mod += wx
      div -= 1
    }
  }
  if (div !== 0) {
    let floordiv = Math.floor(div)
    if (div - floordiv > 0.5) floordiv += 1
    return floordiv
  }
  return vx / wx < 0 || Object.is(vx / wx, -0) ? -0 : 0
}

/** CPython's float_pow; a negative base to a fractional power becomes complex. */
const powFloats = (iv: number, iw: number): Value => {
  if (iw === 0) return flt(1)
  if (Number.isNaN(iv)) return flt(iv)
  if (Number.isNaN(iw)) return flt(iv === 1 ? 1 : Number.NaN)
  if (!Number.isFinite(iw)) {
    const av = Math.abs(iv)
    if (av === 1) return flt(1)
    return flt(av > 1 === iw > 0 ? Infinity : 0)
  }
  const iwIsOdd = Number.isInteger(iw) && Math.abs(iw % 2) === 1
  if (!Number.isFinite(iv)) {
    if (iw > 0) return flt(iwIsOdd ? iv : Math.abs(iv))
    return flt(iwIsOdd ? (iv < 0 ? -0 : 0) : 0)
  }
  if (iv === 0) {
    if (iw < 0) throw new PyError("0.0 cannot be raised to a negative power")
    return flt(iwIsOdd ? iv : 0)
  }
  if (iv < 0 && !Number.isInteger(iw)) return powComplex(iv, 0, iw, 0)
  if (iv === 1) return flt(1)
  if (iv === -1) return flt(iwIsOdd ? -1 : 1)
  const r = powMagnitude(iv, iw)
  if (!Number.isFinite(r)) throw new PyError("(34, 'Numerical result out of range')")
  return flt(iv < 0 && iwIsOdd ? -r : r)
}

const powComplex = (ar: number, ai: number, br: number, bi: number): Value => {
  if (br === 0 && bi === 0) return cpx(1, 0)
  if (ar === 0 && ai === 0) {
    if (bi !== 0 || br < 0) throw new PyError("0.0 to a negative or complex power")
    return cpx(0, 0)
  }
  const vabs = Math.hypot(ar, ai)
  let len = Math.pow(vabs, br)
  const at = Math.atan2(ai, ar)
  let phase = at * br
  if (bi !== 0) {
    len /= Math.exp(at * bi)
    phase += bi * Math.log(vabs)
  }
  const re = len * Math.cos(phase)
  const im = len * Math.sin(phase)
  if (!Number.isFinite(re) || !Number.isFinite(im)) throw new PyError("complex exponentiation")
  return cpx(re, im)
}

const asComplex = (v: Value): readonly [number, number] =>
  v._tag === "complex" ? [v.re, v.im] : v._tag === "float" ? [v.value, 0] : [toDouble((v as { value: bigint }).value), 0]

const isNumber = (v: Value): boolean => v._tag === "int" || v._tag === "float" || v._tag === "complex"

const unsupported = (op: string, a: Value, b: Value): PyError =>
  new PyError(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`)

const binary = (op: "+" | "-" | "*" | "/" | "//" | "**", a: Value, b: Value): Value => {
  if (!isNumber(a) || !isNumber(b)) {
    // Sequences: tuple concatenation and repetition are the only non-numeric operations.
    if (op === "+" && a._tag === "tuple") {
      if (b._tag === "tuple") return a
      throw new PyError(`can only concatenate tuple (not "${typeName(b)}") to tuple`)
    }
    if (op === "*" && (a._tag === "tuple" || b._tag === "tuple")) {
      const count = a._tag === "tuple" ? b : a
      if (count._tag === "int") return { _tag: "tuple" }
      throw new PyError(`can't multiply sequence by non-int of type '${typeName(count)}'`)
    }
    throw unsupported(op === "**" ? "** or pow()" : op, a, b)
  }
  if (a._tag === "complex" || b._tag === "complex") {
    const [ar, ai] = asComplex(a)
    const [br, bi] = asComplex(b)
    switch (op) {
      case "+":
        return cpx(ar + br, ai + bi)
      case "-":
        return cpx(ar - br, ai - bi)
      case "*":
        return cpx(ar * br - ai * bi, ar * bi + ai * br)
      case "/": {
        if (br === 0 && bi === 0) throw new PyError("complex division by zero")
        const d = br * br + bi * bi
        return cpx((ar * br + ai * bi) / d, (ai * br - ar * bi) / d)
      }
      case "//":
        throw unsupported("//", a, b)
      case "**":
        return powComplex(ar, ai, br, bi)
    }
  }
  if (a._tag === "int" && b._tag === "int") {
    switch (op) {
      case "+":
        return int(a.value + b.value)
      case "-":
        return int(a.value - b.value)
      case "*":
        return int(a.value * b.value)
      case "/":
        return flt(trueDivideInts(a.value, b.value))
      case "//":
        return int(floorDivideInts(a.value, b.value))
      case "**": {
        if (b.value < 0n) return powFloats(toDouble(a.value), toDouble(b.value))
        const base = a.value < 0n ? -a.value : a.value
        if (base > 1n && Number(b.value) * bitLength(base) > 2 ** 28) throw new PyError("")
        return int(a.value ** b.value)
      }
    }
  }
  const x = a._tag === "float" ? a.value : toDouble((a as { value: bigint }).value)
  const y = b._tag === "float" ? b.value : toDouble((b as { value: bigint }).value)
  switch (op) {
    case "+":
      return flt(x + y)
    case "-":
      return flt(x - y)
    case "*":
      return flt(x * y)
    case "/":
      if (y === 0) throw new PyError("float division by zero")
      return flt(x / y)
    case "//":
      return flt(floorDivideFloats(x, y))
    case "**":
      return powFloats(x, y)
  }
}

/** Python `str()` of a value, as error messages quote a callee. */
const pyStr = (v: Value): string => {
  switch (v._tag) {
    case "int":
      return v.value.toString()
    case "float":
      return reprFloat(v.value)
    case "tuple":
      return "()"
    case "ellipsis":
      return "Ellipsis"
    case "complex": {
      // complex repr prints its parts without a forced ".0".
      const part = (x: number) => reprFloat(x).replace(/\.0$/, "")
      if (v.re === 0 && !Object.is(v.re, -0)) return `${part(v.im)}j`
      return `(${part(v.re)}${v.im < 0 || Object.is(v.im, -0) ? "-" : "+"}${part(Math.abs(v.im))}j)`
    }
  }
}

const evaluate = (node: Node): Value => {
  switch (node._tag) {
    case "int":
    case "float":
    case "ellipsis":
    case "tuple":
      return node
    case "unary": {
      const v = evaluate(node.operand)
      const neg = node.op === "-"
      switch (v._tag) {
        case "int":
          return neg ? int(-v.value) : v
        case "float":
          return neg ? flt(-v.value) : v
        case "complex":
          return neg ? cpx(-v.re, -v.im) : v
        default:
          throw new PyError(`bad operand type for unary ${node.op}: '${typeName(v)}'`)
      }
    }
    case "binary":
      return binary(node.op, evaluate(node.left), evaluate(node.right))
    case "call": {
      const callee = evaluate(node.callee)
      if (node.arg !== undefined) {
        const arg = evaluate(node.arg.value)
        if (node.arg.star === "*" && arg._tag !== "tuple") {
          throw new PyError(`${pyStr(callee)} argument after * must be an iterable, not ${typeName(arg)}`)
        }
        if (node.arg.star === "**") {
          throw new PyError(`${pyStr(callee)} argument after ** must be a mapping, not ${typeName(arg)}`)
        }
      }
      throw new PyError(`'${typeName(callee)}' object is not callable`)
    }
  }
}

const toFloat = (v: Value): number => {
  switch (v._tag) {
    case "float":
      return v.value
    case "int":
      return toDouble(v.value)
    default:
      throw new PyError(`float() argument must be a string or a real number, not '${typeName(v)}'`)
  }
}

/** `calculate(expression)` as upstream's tool computes it. */
export const calculate = (expression: string): CalculateResult => {
  for (const c of expression) if (!ALLOWED.includes(c)) return { ok: false, message: "Invalid characters in expression" }
  const tokenized = tokenize(expression)
  // eval() of a string reports syntax errors at line 1, or line 0 when there is no token at all.
  const where = (message: string, line: number): CalculateResult => ({ ok: false, message: `${message} (<string>, line ${line})` })
  if ("error" in tokenized) return where(tokenized.error, 1)
  if (tokenized.tokens.length === 1) return where("invalid syntax", 0)
  const parsed = parse(tokenized.tokens)
  if ("error" in parsed) return where(parsed.error, 1)
  try {
    return { ok: true, output: reprFloat(round2(toFloat(evaluate(parsed.node)))) }
  } catch (e) {
    // Only Python exceptions of the evaluation are answers; anything else is a defect.
    if (e instanceof PyError) return { ok: false, message: e.message }
    throw e
  }
}
