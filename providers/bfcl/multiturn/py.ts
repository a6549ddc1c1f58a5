/**
 * Python values as BFCL's simulated APIs hold and return them, with the few Python operations
 * their methods perform (`==`, `in`, `[]`, arithmetic, `str`, `repr`, `json.dumps`) and CPython's
 * exception texts for wrong types, which the executor prints as results.
 *
 * Every value is immutable: a method that "mutates" builds a new value sharing the unchanged parts.
 */
import { correctPow } from "./pow.ts"
import { jsonAsciiString, pyFloatRepr as floatRepr, pyStrRepr as strRepr } from "../pyjson.ts"

/** Python's `repr` of a float and of a str: the single-turn checker's (../pyjson.ts), the same texts. */
export { floatRepr, strRepr }

/** A Python `float`. Ints are plain JS numbers, so floats carry the tag. */
export class PyFloat {
  constructor(readonly value: number) {}
}

/** A Python `tuple`. */
export class PyTuple {
  constructor(readonly items: ReadonlyArray<Py>) {}
}

/** A value the executor can only print (mpmath `mpf`, `Decimal`): its `repr` and type name. */
export class PyOpaque {
  constructor(readonly repr: string, readonly typeName: string) {}
}

/** A Python `dict`: insertion-ordered, keyed by Python hash equality (`1`, `1.0` and `True` are one key). */
export class PyDict {
  private constructor(private readonly map: ReadonlyMap<string, readonly [Py, Py]>) {}
  static readonly empty = new PyDict(new Map())
  static of(entries: Iterable<readonly [Py, Py]>): PyDict {
    const m = new Map<string, readonly [Py, Py]>()
    for (const [k, v] of entries) {
      const h = hashKey(k)
      const old = m.get(h)
      m.set(h, [old === undefined ? k : old[0], v])
    }
    return new PyDict(m)
  }
  /** A dict with str keys from a JS record, in its key order. */
  static fromRecord(r: Readonly<Record<string, Py>>): PyDict {
    return PyDict.of(Object.entries(r))
  }
  get size(): number {
    return this.map.size
  }
  has(k: Py): boolean {
    return this.map.has(hashKey(k))
  }
  get(k: Py): Py | undefined {
    return this.map.get(hashKey(k))?.[1]
  }
  /** `d[k]`: KeyError with the key's repr when absent. */
  item(k: Py): Py {
    const e = this.map.get(hashKey(k))
    if (e === undefined) throw new PyError("KeyError", pyRepr(k))
    return e[1]
  }
  set(k: Py, v: Py): PyDict {
    const h = hashKey(k)
    const m = new Map(this.map)
    const old = m.get(h)
    m.set(h, [old === undefined ? k : old[0], v])
    return new PyDict(m)
  }
  delete(k: Py): PyDict {
    const h = hashKey(k)
    if (!this.map.has(h)) throw new PyError("KeyError", pyRepr(k))
    const m = new Map(this.map)
    m.delete(h)
    return new PyDict(m)
  }
  keys(): Array<Py> {
    return Array.from(this.map.values(), (e) => e[0])
  }
  values(): Array<Py> {
    return Array.from(this.map.values(), (e) => e[1])
  }
  entries(): Array<readonly [Py, Py]> {
    return Array.from(this.map.values())
  }
}

/** A Python `set` (MessageAPI's generated ids). */
export class PySet {
  private constructor(private readonly map: ReadonlyMap<string, Py>) {}
  static of(items: Iterable<Py>): PySet {
    const m = new Map<string, Py>()
    for (const x of items) {
      const h = hashKey(x)
      if (!m.has(h)) m.set(h, x)
    }
    return new PySet(m)
  }
  get size(): number {
    return this.map.size
  }
  has(x: Py): boolean {
    return this.map.has(hashKey(x))
  }
  add(x: Py): PySet {
    const h = hashKey(x)
    if (this.map.has(h)) return this
    const m = new Map(this.map)
    m.set(h, x)
    return new PySet(m)
  }
  items(): Array<Py> {
    return Array.from(this.map.values())
  }
}

export type PyList = ReadonlyArray<Py>

export type Py = null | boolean | number | PyFloat | string | PyList | PyTuple | PyDict | PySet | PyOpaque | PyObject

/** An instance of one of the APIs' own classes (the file system's File and Directory). */
export interface PyObject {
  readonly pyClass: string
}

/**
 * A Python exception: its class and `str(exception)`, which the executor prints. Not an `Error`:
 * it is control flow inside the executor, always caught there, and thrown often (wrong-type calls),
 * so it skips the stack capture an Error pays for.
 */
export class PyError {
  constructor(readonly pyClass: string, readonly text: string) {}
}

export const typeError = (text: string): PyError => new PyError("TypeError", text)

export const isObject = (v: Py): v is PyObject =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof PyFloat) && !(v instanceof PyTuple) &&
  !(v instanceof PyDict) && !(v instanceof PySet) && !(v instanceof PyOpaque)

/** `type(v).__name__`. */
export const typeName = (v: Py): string => {
  switch (typeof v) {
    case "string":
      return "str"
    case "number":
      return "int"
    case "boolean":
      return "bool"
  }
  if (v === null) return "NoneType"
  if (Array.isArray(v)) return "list"
  if (v instanceof PyFloat) return "float"
  if (v instanceof PyTuple) return "tuple"
  if (v instanceof PyDict) return "dict"
  if (v instanceof PySet) return "set"
  if (v instanceof PyOpaque) return v.typeName
  return (v as PyObject).pyClass
}

export const float = (x: number): PyFloat => new PyFloat(x)

/** Whether v is an int, float or bool (`isinstance(v, (int, float))`). */
export const isNumber = (v: Py): v is number | boolean | PyFloat =>
  typeof v === "number" || typeof v === "boolean" || v instanceof PyFloat

export const isInt = (v: Py): v is number | boolean => typeof v === "number" || typeof v === "boolean"

/** The numeric value of an int, bool or float. */
export const num = (v: number | boolean | PyFloat): number =>
  typeof v === "number" ? v : typeof v === "boolean" ? (v ? 1 : 0) : v.value

// ---------------------------------------------------------------------------------------------
// Hashing and equality

/** A dict key's identity under Python's hash equality (TypeError for an unhashable value). */
export const hashKey = (k: Py): string => {
  switch (typeof k) {
    case "string":
      return "s" + k
    case "number":
      return "n" + k
    case "boolean":
      return k ? "n1" : "n0"
  }
  if (k === null) return "N"
  if (k instanceof PyFloat) return Number.isNaN(k.value) ? "nan" : "n" + k.value
  if (k instanceof PyTuple) return "t(" + k.items.map(hashKey).join(",") + ")"
  throw typeError(`unhashable type: '${typeName(k)}'`)
}

/** Whether `v` can be a dict key or set member. */
export const hashable = (v: Py): boolean => {
  try {
    hashKey(v)
    return true
  } catch {
    return false
  }
}

/** Python `==`. */
export const pyEq = (a: Py, b: Py): boolean => {
  if (a === b) return !(a instanceof PyFloat && Number.isNaN(a.value))
  if (isNumber(a) && isNumber(b)) return num(a) === num(b)
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => pyEq(x, b[i] as Py))
  if (a instanceof PyTuple) return b instanceof PyTuple && a.items.length === b.items.length && a.items.every((x, i) => pyEq(x, b.items[i] as Py))
  if (a instanceof PyDict) {
    if (!(b instanceof PyDict) || a.size !== b.size) return false
    for (const [k, v] of a.entries()) {
      const w = b.get(k)
      if (w === undefined || !pyEq(v, w)) return false
    }
    return true
  }
  if (a instanceof PySet) return b instanceof PySet && a.size === b.size && a.items().every((x) => b.has(x))
  if (a instanceof PyOpaque) return b instanceof PyOpaque && a.repr === b.repr
  const ea = objectEq.get((a as PyObject).pyClass)
  return ea !== undefined && ea(a as PyObject, b as PyObject)
}

const objectEq = new Map<string, (a: PyObject, b: PyObject) => boolean>()
/** Registers `__eq__` for an API's own class. */
export const registerEq = (pyClass: string, eq: (a: PyObject, b: PyObject) => boolean): void => {
  objectEq.set(pyClass, eq)
}

/** Python's `x in container`. */
export const pyIn = (x: Py, container: Py): boolean => {
  if (typeof container === "string") {
    if (typeof x !== "string") throw typeError(`'in <string>' requires string as left operand, not ${typeName(x)}`)
    return container.includes(x)
  }
  if (Array.isArray(container)) return container.some((y) => pyEq(x, y))
  if (container instanceof PyTuple) return container.items.some((y) => pyEq(x, y))
  if (container instanceof PyDict) return container.has(x)
  if (container instanceof PySet) return container.has(x)
  throw typeError(`argument of type '${typeName(container)}' is not iterable`)
}

/** Python's `iter(v)` as an array (a dict gives its keys, a str its characters). */
export const pyIter = (v: Py): ReadonlyArray<Py> => {
  if (Array.isArray(v)) return v
  if (typeof v === "string") return Array.from(v)
  if (v instanceof PyTuple) return v.items
  if (v instanceof PyDict) return v.keys()
  if (v instanceof PySet) return v.items()
  throw typeError(`'${typeName(v)}' object is not iterable`)
}

/** `bool(v)`. */
export const truthy = (v: Py): boolean => {
  if (v === null) return false
  if (typeof v === "boolean") return v
  if (typeof v === "number") return v !== 0
  if (typeof v === "string") return v.length > 0
  if (v instanceof PyFloat) return v.value !== 0
  if (Array.isArray(v)) return v.length > 0
  if (v instanceof PyTuple) return v.items.length > 0
  if (v instanceof PyDict || v instanceof PySet) return v.size > 0
  return true
}

/** `len(v)`. */
export const pyLen = (v: Py): number => {
  if (typeof v === "string") return Array.from(v).length
  if (Array.isArray(v)) return v.length
  if (v instanceof PyTuple) return v.items.length
  if (v instanceof PyDict || v instanceof PySet) return v.size
  throw typeError(`object of type '${typeName(v)}' has no len()`)
}

/** The error for `v.name` when v's type has no such attribute. */
export const noAttribute = (v: Py, name: string): PyError =>
  new PyError("AttributeError", `'${typeName(v)}' object has no attribute '${name}'`)

/** `v.lower()` and friends: the str, or the AttributeError a non-str raises. */
export const asStr = (v: Py, method: string): string => {
  if (typeof v !== "string") throw noAttribute(v, method)
  return v
}

// ---------------------------------------------------------------------------------------------
// Arithmetic and comparison (ints stay ints; a float anywhere makes a float)

const opError = (op: string, a: Py, b: Py): PyError =>
  typeError(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`)

const numeric = (a: Py, b: Py, op: string): [number, number, boolean] => {
  if (!isNumber(a) || !isNumber(b)) throw opError(op, a, b)
  return [num(a), num(b), a instanceof PyFloat || b instanceof PyFloat]
}

const intOrFloat = (x: number, isFloat: boolean): number | PyFloat => (isFloat ? new PyFloat(x) : x)

export const pyAdd = (a: Py, b: Py): Py => {
  if (typeof a === "string") {
    if (typeof b === "string") return a + b
    throw typeError(`can only concatenate str (not "${typeName(b)}") to str`)
  }
  if (Array.isArray(a)) {
    if (Array.isArray(b)) return [...a, ...b]
    throw typeError(`can only concatenate list (not "${typeName(b)}") to list`)
  }
  const [x, y, f] = numeric(a, b, "+")
  return intOrFloat(x + y, f)
}

export const pySub = (a: Py, b: Py): Py => {
  const [x, y, f] = numeric(a, b, "-")
  return intOrFloat(x - y, f)
}

export const pyMul = (a: Py, b: Py): Py => {
  const isSeq = (v: Py) => typeof v === "string" || Array.isArray(v) || v instanceof PyTuple
  if (isSeq(a) || isSeq(b)) {
    const [seq, n] = isSeq(a) ? [a, b] : [b, a]
    if (!isInt(n)) {
      if (isSeq(n) || !isNumber(n)) throw opError("*", a, b)
      throw typeError(`can't multiply sequence by non-int of type '${typeName(n)}'`)
    }
    const times = Math.max(0, num(n))
    if (typeof seq === "string") return seq.repeat(times)
    const items = Array.isArray(seq) ? seq : (seq as PyTuple).items
    const out = Array.from({ length: times }, () => items).flat()
    return Array.isArray(seq) ? out : new PyTuple(out)
  }
  const [x, y, f] = numeric(a, b, "*")
  return intOrFloat(x * y, f)
}

export const pyTrueDiv = (a: Py, b: Py): PyFloat => {
  const [x, y] = numeric(a, b, "/")
  if (y === 0) throw new PyError("ZeroDivisionError", isInt(a) && isInt(b) ? "division by zero" : "float division by zero")
  return new PyFloat(x / y)
}

/** Python's `a ** b` for numbers. */
export const pyPow = (a: Py, b: Py): Py => {
  if (!isNumber(a) || !isNumber(b)) throw typeError(`unsupported operand type(s) for ** or pow(): '${typeName(a)}' and '${typeName(b)}'`)
  const x = num(a)
  const y = num(b)
  const isFloat = a instanceof PyFloat || b instanceof PyFloat
  if (!isFloat && y >= 0) return x ** y
  if (x === 0 && y < 0) {
    throw new PyError("ZeroDivisionError", isFloat ? "0.0 cannot be raised to a negative power" : "0.0 cannot be raised to a negative power")
  }
  if (x < 0 && !Number.isInteger(y)) {
    throw new PyError("ValueError", "complex result")
  }
  const magnitude = x === 0 || !Number.isFinite(x) || !Number.isFinite(y) ? Math.abs(x) ** y : correctPow(Math.abs(x), y)
  const r = (x < 0 || Object.is(x, -0)) && Number.isInteger(y) && Math.abs(y) % 2 === 1 ? -magnitude : magnitude
  if (!Number.isFinite(r) && Number.isFinite(x) && Number.isFinite(y)) throw new PyError("OverflowError", "(34, 'Numerical result out of range')")
  return new PyFloat(r)
}

/** Python's `a < b` (and friends) for the orderable types the APIs compare. */
export const pyCompare = (op: "<" | "<=" | ">" | ">=", a: Py, b: Py): boolean => {
  let c: number
  if (isNumber(a) && isNumber(b)) {
    const x = num(a)
    const y = num(b)
    if (Number.isNaN(x) || Number.isNaN(y)) return false
    c = x < y ? -1 : x > y ? 1 : 0
  } else if (typeof a === "string" && typeof b === "string") {
    c = a < b ? -1 : a > b ? 1 : 0
  } else if ((Array.isArray(a) && Array.isArray(b)) || (a instanceof PyTuple && b instanceof PyTuple)) {
    const xs = Array.isArray(a) ? a : (a as PyTuple).items
    const ys = Array.isArray(b) ? b : (b as PyTuple).items
    let i = 0
    while (i < xs.length && i < ys.length && pyEq(xs[i] as Py, ys[i] as Py)) i++
    if (i < xs.length && i < ys.length) return pyCompare(op, xs[i] as Py, ys[i] as Py)
    c = xs.length - ys.length
  } else {
    throw typeError(`'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`)
  }
  switch (op) {
    case "<":
      return c < 0
    case "<=":
      return c <= 0
    case ">":
      return c > 0
    case ">=":
      return c >= 0
  }
}

/** `float(v)`. */
export const toFloat = (v: Py): number => {
  if (isNumber(v)) return num(v)
  if (typeof v === "string") {
    const t = v.trim().replaceAll("_", "")
    if (/^[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)$/.test(t)) return Number(t)
    const l = t.toLowerCase()
    if (/^[+-]?(inf|infinity)$/.test(l)) return l.startsWith("-") ? -Infinity : Infinity
    if (/^[+-]?nan$/.test(l)) return NaN
    throw new PyError("ValueError", `could not convert string to float: ${pyRepr(v)}`)
  }
  throw typeError(`float() argument must be a string or a real number, not '${typeName(v)}'`)
}

// ---------------------------------------------------------------------------------------------
// repr and str




const objectRepr = new Map<string, (v: PyObject) => string>()
/** Registers `__repr__` for an API's own class. */
export const registerRepr = (pyClass: string, repr: (v: PyObject) => string): void => {
  objectRepr.set(pyClass, repr)
}

/** Python's `repr(v)`. */
export const pyRepr = (v: Py): string => {
  switch (typeof v) {
    case "string":
      return strRepr(v)
    case "number":
      return String(v)
    case "boolean":
      return v ? "True" : "False"
  }
  if (v === null) return "None"
  if (v instanceof PyFloat) return floatRepr(v.value)
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(", ")}]`
  if (v instanceof PyTuple) return v.items.length === 1 ? `(${pyRepr(v.items[0] as Py)},)` : `(${v.items.map(pyRepr).join(", ")})`
  if (v instanceof PyDict) return `{${v.entries().map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(", ")}}`
  if (v instanceof PySet) return v.size === 0 ? "set()" : `{${v.items().map(pyRepr).join(", ")}}`
  if (v instanceof PyOpaque) return v.repr
  const r = objectRepr.get((v as PyObject).pyClass)
  return r === undefined ? `<${(v as PyObject).pyClass} object>` : r(v as PyObject)
}

/** Python's `f"{x:.{digits}f}"`: the exact binary value rounded half to even. */
export const formatFixed = (x: number, digits: number): string => {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf"
  const sign = x < 0 || Object.is(x, -0) ? "-" : ""
  const a = Math.abs(x)
  if (a >= 1e21) return sign + BigInt(a).toString() + (digits > 0 ? "." + "0".repeat(digits) : "")
  const s = a.toFixed(digits)
  // toFixed rounds an exact tie up; Python rounds it to even
  const longer = a.toFixed(Math.min(100, digits + 30))
  if (/^50*$/.test(longer.slice(longer.indexOf(".") + 1 + digits))) {
    const scaled = s.replace(".", "")
    if (Number(scaled.slice(-1)) % 2 === 1) {
      const down = (BigInt(scaled) - 1n).toString().padStart(scaled.length, "0")
      return sign + (digits > 0 ? `${down.slice(0, down.length - digits)}.${down.slice(down.length - digits)}` : down)
    }
  }
  return sign + s
}

/** Python's `str(v)` (also what an f-string shows). */
export const pyStr = (v: Py): string => (typeof v === "string" ? v : pyRepr(v))

// ---------------------------------------------------------------------------------------------
// json.dumps with its defaults (ensure_ascii, ", " and ": ")

class NotSerializable extends Error {}

const jsonString = jsonAsciiString

const jsonFloat = (x: number): string =>
  Number.isNaN(x) ? "NaN" : x === Infinity ? "Infinity" : x === -Infinity ? "-Infinity" : floatRepr(x)

const jsonKey = (k: Py): string => {
  if (typeof k === "string") return jsonString(k)
  if (typeof k === "number") return `"${k}"`
  if (typeof k === "boolean") return k ? '"true"' : '"false"'
  if (k === null) return '"null"'
  if (k instanceof PyFloat) return `"${jsonFloat(k.value)}"`
  throw new NotSerializable()
}

const dumps = (v: Py): string => {
  switch (typeof v) {
    case "string":
      return jsonString(v)
    case "number":
      return String(v)
    case "boolean":
      return v ? "true" : "false"
  }
  if (v === null) return "null"
  if (v instanceof PyFloat) return jsonFloat(v.value)
  if (v instanceof PyOpaque && v.typeName === "int") return v.repr
  if (Array.isArray(v)) return `[${v.map(dumps).join(", ")}]`
  if (v instanceof PyTuple) return `[${v.items.map(dumps).join(", ")}]`
  if (v instanceof PyDict) return `{${v.entries().map(([k, x]) => `${jsonKey(k)}: ${dumps(x)}`).join(", ")}}`
  throw new NotSerializable()
}

/** `json.dumps(v)`, or undefined where Python's raises (a set, an mpf, a tuple key...). */
export const jsonDumps = (v: Py): string | undefined => {
  try {
    return dumps(v)
  } catch (e) {
    if (e instanceof NotSerializable) return undefined
    throw e
  }
}

/** How the executor turns a method's return value into the result text. */
export const resultText = (v: Py): string => {
  if (typeof v === "string") return v
  if (v instanceof PyDict) return jsonDumps(v) ?? pyRepr(v)
  return pyStr(v)
}
