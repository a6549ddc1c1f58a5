/**
 * The call strings upstream's executor `eval`s: a Python call expression whose arguments are
 * literals (str with Python's escapes, int, float, None/True/False, list, dict, tuple, set),
 * positional then keyword. A text that is not one gives CPython 3.11's SyntaxError text as the
 * oracle corpus shows it; a bare name other than a constant is kept for a NameError at evaluation.
 */
import { type Py, PyDict, PyError, PyFloat, PySet, PyTuple } from "./py.ts"

export type Expr =
  | { readonly _tag: "Const"; readonly value: Py }
  | { readonly _tag: "Name"; readonly name: string }
  | { readonly _tag: "List"; readonly items: ReadonlyArray<Expr> }
  | { readonly _tag: "Tuple"; readonly items: ReadonlyArray<Expr> }
  | { readonly _tag: "Set"; readonly items: ReadonlyArray<Expr> }
  | { readonly _tag: "Dict"; readonly entries: ReadonlyArray<readonly [Expr, Expr]> }
  | { readonly _tag: "Neg"; readonly operand: Expr; readonly sign: -1 | 1 }

export interface Call {
  /** `name` or `object.name`. */
  readonly callee: ReadonlyArray<string>
  readonly args: ReadonlyArray<Expr>
  readonly kwargs: ReadonlyArray<readonly [string, Expr]>
}

export type Parsed = { readonly ok: true; readonly call: Call } | { readonly ok: false; readonly message: string }

class Syntax extends Error {}

const idStart = /[A-Za-z_\u00c0-\uffff]/
const idChar = /[A-Za-z0-9_\u00c0-\uffff]/

/** Parses one call string. */
export const parseCall = (text: string): Parsed => {
  let i = 0
  const open: Array<string> = []
  const ws = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || (open.length > 0 && (text[i] === "\n" || text[i] === "\r")))) i++
    if (text[i] === "\\" && text[i + 1] === "\n") {
      i += 2
      ws()
    }
  }
  const fail = (message = "invalid syntax"): never => {
    if (i >= text.length && open.length > 0) throw new Syntax(`'${open[open.length - 1]}' was never closed`)
    throw new Syntax(message)
  }
  const ident = (): string | undefined => {
    if (i < text.length && idStart.test(text[i] as string)) {
      const s = i
      while (i < text.length && idChar.test(text[i] as string)) i++
      return text.slice(s, i)
    }
    return undefined
  }
  const stringLit = (): string => {
    let raw = false
    const p = /[rRuUbBfF]{0,2}(?=['"])/y
    p.lastIndex = i
    const pm = p.exec(text)
    if (pm !== null) {
      raw = /[rR]/.test(pm[0])
      i += pm[0].length
    }
    const q = text[i] as string
    const triple = text.startsWith(q.repeat(3), i)
    const delim = triple ? q.repeat(3) : q
    i += delim.length
    let out = ""
    for (;;) {
      if (i >= text.length) throw new Syntax(triple ? "unterminated triple-quoted string literal (detected at line 1)" : "unterminated string literal (detected at line 1)")
      if (text.startsWith(delim, i)) {
        i += delim.length
        return out
      }
      const c = text[i] as string
      if (!triple && c === "\n") throw new Syntax("unterminated string literal (detected at line 1)")
      if (c === "\\") {
        const e = text[i + 1] ?? ""
        if (raw) {
          out += c + e
          i += 2
          continue
        }
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
          case "a":
            out += "\x07"
            break
          case "b":
            out += "\b"
            break
          case "f":
            out += "\f"
            break
          case "v":
            out += "\v"
            break
          case "\\":
          case "'":
          case '"':
            out += e
            break
          case "\n":
            break
          case "x":
          case "u":
          case "U": {
            const n = e === "x" ? 2 : e === "u" ? 4 : 8
            const h = text.slice(i, i + n)
            if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(h)) fail()
            out += String.fromCodePoint(parseInt(h, 16))
            i += n
            break
          }
          default:
            if (/[0-7]/.test(e)) {
              let o = e
              while (o.length < 3 && /[0-7]/.test(text[i] ?? "")) o += text[i++]
              out += String.fromCodePoint(parseInt(o, 8))
            } else out += "\\" + e
        }
        continue
      }
      out += c
      i++
    }
  }
  const number = (): Py => {
    const m = /0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(\d[\d_]*)?(\.\d[\d_]*|\.)?([eE][+-]?\d[\d_]*)?/y
    m.lastIndex = i
    const r = m.exec(text)
    if (r === null || r[0] === "" || r[0] === ".") return fail()
    i += r[0].length
    const t = r[0].replaceAll("_", "")
    if (/^0[xXoObB]/.test(t)) return Number(t)
    if (r[2] !== undefined || r[3] !== undefined) return new PyFloat(Number(t))
    return Number(t)
  }
  const sequence = (close: string): { items: Array<Expr>; trailingComma: boolean } => {
    const items: Array<Expr> = []
    let trailingComma = false
    for (;;) {
      ws()
      if (text[i] === close) break
      items.push(expr())
      ws()
      if (text[i] === ",") {
        i++
        trailingComma = true
        continue
      }
      trailingComma = false
      if (text[i] === close) break
      comma()
    }
    return { items, trailingComma }
  }
  // Between two items of a bracket: a comma, else CPython's hint when an expression follows
  const comma = (): never => {
    if (i < text.length && /[A-Za-z0-9_'"(\[{.-]/.test(text[i] as string)) fail("invalid syntax. Perhaps you forgot a comma?")
    return fail()
  }
  const expr = (): Expr => {
    ws()
    const c = text[i]
    if (c === undefined) return fail()
    if (c === "-" || c === "+") {
      i++
      return { _tag: "Neg", operand: expr(), sign: c === "-" ? -1 : 1 }
    }
    if (c === "[") {
      i++
      open.push("[")
      const { items } = sequence("]")
      i++
      open.pop()
      return { _tag: "List", items }
    }
    if (c === "(") {
      i++
      open.push("(")
      const { items, trailingComma } = sequence(")")
      i++
      open.pop()
      if (items.length === 1 && !trailingComma) return items[0] as Expr
      return { _tag: "Tuple", items }
    }
    if (c === "{") {
      i++
      open.push("{")
      ws()
      if (text[i] === "}") {
        i++
        open.pop()
        return { _tag: "Dict", entries: [] }
      }
      const first = expr()
      ws()
      if (text[i] === ":") {
        const entries: Array<readonly [Expr, Expr]> = []
        let k = first
        for (;;) {
          ws()
          if (text[i] !== ":") fail()
          i++
          entries.push([k, expr()])
          ws()
          if (text[i] === ",") {
            i++
            ws()
            if (text[i] === "}") break
            k = expr()
            continue
          }
          if (text[i] === "}") break
          comma()
        }
        i++
        open.pop()
        return { _tag: "Dict", entries }
      }
      const items = [first]
      if (text[i] === ",") {
        i++
        items.push(...sequence("}").items)
      } else if (text[i] !== "}") comma()
      i++
      open.pop()
      return { _tag: "Set", items }
    }
    if (c === "'" || c === '"' || /^[rRuUbBfF]{1,2}['"]/.test(text.slice(i, i + 3))) {
      let s = stringLit()
      ws()
      while (text[i] === "'" || text[i] === '"' || /^[rRuU]{1,2}['"]/.test(text.slice(i, i + 3))) {
        s += stringLit()
        ws()
      }
      return { _tag: "Const", value: s }
    }
    if (/[0-9.]/.test(c)) return { _tag: "Const", value: number() }
    const name = ident()
    if (name === undefined) return fail()
    if (name === "True") return { _tag: "Const", value: true }
    if (name === "False") return { _tag: "Const", value: false }
    if (name === "None") return { _tag: "Const", value: null }
    return { _tag: "Name", name }
  }
  try {
    ws()
    const callee: Array<string> = []
    const first = ident()
    if (first === undefined) return fail()
    callee.push(first)
    while (text[i] === ".") {
      i++
      callee.push(ident() ?? fail())
    }
    ws()
    if (text[i] !== "(") fail()
    i++
    open.push("(")
    const args: Array<Expr> = []
    const kwargs: Array<readonly [string, Expr]> = []
    for (;;) {
      ws()
      if (text[i] === ")") break
      const save = i
      const k = ident()
      ws()
      if (k !== undefined && text[i] === "=" && text[i + 1] !== "=") {
        i++
        ws()
        if (text[i] === ")" || text[i] === "," || i >= text.length) fail()
        kwargs.push([k, expr()])
      } else {
        i = save
        const e = expr()
        if (kwargs.length > 0) {
          ws()
          if (text[i] === "," || text[i] === ")") fail("positional argument follows keyword argument")
        }
        args.push(e)
      }
      ws()
      if (text[i] === ",") {
        i++
        continue
      }
      if (text[i] === ")") break
      comma()
    }
    i++
    open.pop()
    ws()
    if (i < text.length) fail()
    return { ok: true, call: { callee, args, kwargs } }
  } catch (e) {
    if (e instanceof Syntax) return { ok: false, message: `${e.message} (<string>, line 1)` }
    throw e
  }
}

/** Evaluates an argument; a bare name is a NameError, as in upstream's `eval`. */
export const evalExpr = (e: Expr): Py => {
  switch (e._tag) {
    case "Const":
      return e.value
    case "Name":
      throw new PyError("NameError", `name '${e.name}' is not defined`)
    case "List":
      return e.items.map(evalExpr)
    case "Tuple":
      return new PyTuple(e.items.map(evalExpr))
    case "Set":
      return PySet.of(e.items.map(evalExpr))
    case "Dict":
      return PyDict.of(e.entries.map(([k, v]) => [evalExpr(k), evalExpr(v)] as const))
    case "Neg": {
      const v = evalExpr(e.operand)
      if (typeof v === "number") return e.sign * v
      if (typeof v === "boolean") return e.sign * (v ? 1 : 0)
      if (v instanceof PyFloat) return new PyFloat(e.sign * v.value)
      throw new PyError("TypeError", `bad operand type for unary ${e.sign < 0 ? "-" : "+"}: '${v === null ? "NoneType" : typeof v === "string" ? "str" : Array.isArray(v) ? "list" : "object"}'`)
    }
  }
}
