/**
 * The oracle corpus's canonical state dump: `json.dumps(canon(state), ensure_ascii=False,
 * separators=(",", ":"))` and its sha256, where `canon` keeps what JSON would lose (float vs int,
 * tuples, sets, non-str dict keys, the file system's objects). Also a reader of Python-written
 * JSON that keeps ints and floats apart, for the task files' initial configs.
 */
import { createHash } from "node:crypto"
import { floatRepr, isObject, type Py, PyDict, PyFloat, PyOpaque, type PyObject, PySet, PyTuple, pyRepr, typeName } from "./py.ts"

const jsonString = (s: string): string => {
  // ensure_ascii=False: only the quote, the backslash and control characters are escaped
  if (!/["\\\u0000-\u001f]/.test(s)) return `"${s}"`
  let out = '"'
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c === 34) out += '\\"'
    else if (c === 92) out += "\\\\"
    else if (c === 10) out += "\\n"
    else if (c === 13) out += "\\r"
    else if (c === 9) out += "\\t"
    else if (c === 8) out += "\\b"
    else if (c === 12) out += "\\f"
    else if (c < 0x20) out += "\\u" + c.toString(16).padStart(4, "0")
    else out += s[i]
  }
  return out + '"'
}

const objectCanon = new Map<string, (v: PyObject) => string>()
/** Registers the canonical form of an API's own class (File, Directory). */
export const registerCanon = (pyClass: string, canon: (v: PyObject, dump: (v: Py) => string) => string): void => {
  objectCanon.set(pyClass, (v) => canon(v, canonDump))
}

/** The canonical dump of one value. */
export const canonDump = (v: Py): string => {
  switch (typeof v) {
    case "string":
      return jsonString(v)
    case "number":
      return String(v)
    case "boolean":
      return v ? "true" : "false"
  }
  if (v === null) return "null"
  if (v instanceof PyFloat) {
    const x = v.value
    if (Number.isFinite(x)) return floatRepr(x)
    return `{"__float__":"${Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf"}"}`
  }
  if (Array.isArray(v)) return `[${v.map(canonDump).join(",")}]`
  if (v instanceof PyTuple) return `{"__tuple__":[${v.items.map(canonDump).join(",")}]}`
  if (v instanceof PySet) {
    const items = v.items().map(canonDump).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    return `{"__set__":[${items.join(",")}]}`
  }
  if (v instanceof PyDict) {
    const entries = v.entries()
    if (entries.every(([k]) => typeof k === "string")) {
      return `{${entries.map(([k, x]) => `${jsonString(k as string)}:${canonDump(x)}`).join(",")}}`
    }
    return `{"__dict__":[${entries.map(([k, x]) => `[${canonDump(k)},${canonDump(x)}]`).join(",")}]}`
  }
  if (v instanceof PyOpaque && v.typeName === "int") return v.repr
  if (isObject(v)) {
    const c = objectCanon.get(v.pyClass)
    if (c !== undefined) return c(v)
  }
  return `{"__repr__":${jsonString(v instanceof PyOpaque ? v.repr : pyRepr(v))},"__type__":${jsonString(typeName(v))}}`
}

/** One instance's public state: its attributes in `vars()` order. */
export type PublicState = ReadonlyArray<readonly [string, Py]>

/** The dump of `{class: {attr: canon(value)}}`. */
export const stateDump = (classes: ReadonlyArray<readonly [string, PublicState]>): string =>
  `{${classes.map(([c, attrs]) => `${jsonString(c)}:{${attrs.map(([a, v]) => `${jsonString(a)}:${canonDump(v)}`).join(",")}}`).join(",")}}`

export const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

// ---------------------------------------------------------------------------------------------
// Reading Python-written JSON

/** Parses JSON as Python's `json.loads` does: `5` an int, `5.0` a float, objects dicts in order. */
export const parsePythonJson = (text: string): Py => {
  let i = 0
  const ws = () => {
    while (i < text.length) {
      const c = text.charCodeAt(i)
      if (c === 32 || c === 10 || c === 13 || c === 9) i++
      else break
    }
  }
  const fail = (): never => {
    throw new SyntaxError(`invalid JSON at offset ${i}`)
  }
  const str = (): string => {
    i++
    let out = ""
    let start = i
    for (;;) {
      const c = text.charCodeAt(i)
      if (Number.isNaN(c)) fail()
      if (c === 34) {
        out += text.slice(start, i)
        i++
        return out
      }
      if (c === 92) {
        out += text.slice(start, i)
        const e = text[i + 1]
        i += 2
        switch (e) {
          case "n":
            out += "\n"
            break
          case "t":
            out += "\t"
            break
          case "r":
            out += "\r"
            break
          case "b":
            out += "\b"
            break
          case "f":
            out += "\f"
            break
          case "u":
            out += String.fromCharCode(parseInt(text.slice(i, i + 4), 16))
            i += 4
            break
          default:
            out += e ?? fail()
        }
        start = i
      } else i++
    }
  }
  const value = (): Py => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      const entries: Array<readonly [Py, Py]> = []
      ws()
      if (text[i] === "}") {
        i++
        return PyDict.of(entries)
      }
      for (;;) {
        ws()
        if (text[i] !== '"') fail()
        const k = str()
        ws()
        if (text[i++] !== ":") fail()
        entries.push([k, value()])
        ws()
        const d = text[i++]
        if (d === "}") return PyDict.of(entries)
        if (d !== ",") fail()
      }
    }
    if (c === "[") {
      i++
      const items: Array<Py> = []
      ws()
      if (text[i] === "]") {
        i++
        return items
      }
      for (;;) {
        items.push(value())
        ws()
        const d = text[i++]
        if (d === "]") return items
        if (d !== ",") fail()
      }
    }
    if (c === '"') return str()
    if (text.startsWith("true", i)) {
      i += 4
      return true
    }
    if (text.startsWith("false", i)) {
      i += 5
      return false
    }
    if (text.startsWith("null", i)) {
      i += 4
      return null
    }
    if (text.startsWith("NaN", i)) {
      i += 3
      return new PyFloat(NaN)
    }
    if (text.startsWith("Infinity", i)) {
      i += 8
      return new PyFloat(Infinity)
    }
    if (text.startsWith("-Infinity", i)) {
      i += 9
      return new PyFloat(-Infinity)
    }
    const m = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y
    m.lastIndex = i
    const r = m.exec(text)
    if (r === null) return fail()
    i += r[0].length
    return r[1] === undefined && r[2] === undefined ? Number(r[0]) : new PyFloat(Number(r[0]))
  }
  const v = value()
  ws()
  if (i !== text.length) fail()
  return v
}
