/**
 * A reader of the Python that tau2-bench's generated files come from: upstream makes its tool
 * schemas and prompt texts by running its own code, so `assay data pull` reads that code (pinned
 * by URL and sha256) and renders the same files. It reads declarations only: classes, functions
 * with their decorators, parameters and docstrings, and assignments. Statements it does not need
 * (bodies, control flow) are skipped by their extent; an expression it cannot read becomes
 * `opaque`, which the renderers refuse where they need a value.
 */
import { Data, Either } from "effect"

export class PythonSourceError extends Data.TaggedError("PythonSourceError")<{ readonly file: string; readonly line: number; readonly reason: string }> {
  override get message() {
    return `${this.file}:${this.line}: ${this.reason}`
  }
}

export type Expr =
  | { readonly kind: "name"; readonly id: string }
  | { readonly kind: "attribute"; readonly value: Expr; readonly attr: string }
  | { readonly kind: "subscript"; readonly value: Expr; readonly index: ReadonlyArray<Expr> }
  | { readonly kind: "call"; readonly func: Expr; readonly args: ReadonlyArray<Expr>; readonly keywords: ReadonlyArray<{ readonly name: string; readonly value: Expr }> }
  | { readonly kind: "str"; readonly value: string }
  | { readonly kind: "number"; readonly text: string }
  | { readonly kind: "constant"; readonly value: null | boolean }
  | { readonly kind: "list" | "tuple"; readonly items: ReadonlyArray<Expr> }
  | { readonly kind: "dict"; readonly entries: ReadonlyArray<readonly [Expr, Expr]> }
  | { readonly kind: "union"; readonly left: Expr; readonly right: Expr }
  | { readonly kind: "unary"; readonly op: string; readonly operand: Expr }
  | { readonly kind: "opaque" }

export interface Param {
  readonly name: string
  readonly annotation: Expr | null
  readonly default: Expr | null
  /** `*args` or `**kwargs`. */
  readonly star: "" | "*" | "**"
}

export type Stmt =
  | { readonly kind: "class"; readonly line: number; readonly name: string; readonly bases: ReadonlyArray<Expr>; readonly decorators: ReadonlyArray<Expr>; readonly body: ReadonlyArray<Stmt> }
  | {
    readonly kind: "def"
    readonly line: number
    readonly name: string
    readonly decorators: ReadonlyArray<Expr>
    readonly params: ReadonlyArray<Param>
    readonly returns: Expr | null
    readonly body: ReadonlyArray<Stmt>
  }
  | { readonly kind: "assign"; readonly line: number; readonly target: string; readonly annotation: Expr | null; readonly value: Expr | null }
  | { readonly kind: "expr"; readonly line: number; readonly value: Expr }
  | { readonly kind: "other"; readonly line: number }

/** The docstring of a body: its first statement when that is a string. */
export const docstringOf = (body: ReadonlyArray<Stmt>): string | null => {
  const first = body[0]
  return first !== undefined && first.kind === "expr" && first.value.kind === "str" ? first.value.value : null
}

// ---- tokens ----

type Tok =
  | { readonly t: "name"; readonly v: string; readonly line: number }
  | { readonly t: "str"; readonly v: string; readonly line: number; readonly formatted: boolean }
  | { readonly t: "number"; readonly v: string; readonly line: number }
  | { readonly t: "op"; readonly v: string; readonly line: number }
  | { readonly t: "newline" | "indent" | "dedent" | "end"; readonly v: ""; readonly line: number }

const OPS = ["**=", "//=", ">>=", "<<=", "...", "->", ":=", "**", "//", "==", "!=", "<=", ">=", "<<", ">>", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "@="]
const STRING_START = /^([rRbBuUfF]{0,2})('''|"""|'|")/
const NAME = /^[A-Za-z_\u00C0-\uFFFF][A-Za-z0-9_\u00C0-\uFFFF]*/
const NUMBER = /^(?:0[xXoObB][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?)/

/** The value of a string literal's body, as Python reads it. */
const unescape = (body: string, raw: boolean, fail: (why: string) => never): string => {
  if (raw) return body
  let out = ""
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!
    if (c !== "\\") {
      out += c
      continue
    }
    const n = body[++i]
    switch (n) {
      case "\n":
        break
      case "\\":
      case "'":
      case "\"":
        out += n
        break
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
      case "x":
      case "u":
      case "U": {
        const width = n === "x" ? 2 : n === "u" ? 4 : 8
        const hex = body.slice(i + 1, i + 1 + width)
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== width) fail(`bad \\${n} escape`)
        out += String.fromCodePoint(parseInt(hex, 16))
        i += width
        break
      }
      default:
        if (n !== undefined && /[0-7]/.test(n)) {
          const oct = /^[0-7]{1,3}/.exec(body.slice(i))![0]
          out += String.fromCharCode(parseInt(oct, 8))
          i += oct.length - 1
        } else {
          // Python keeps an unknown escape as written.
          out += "\\" + (n ?? "")
        }
    }
  }
  return out
}

const tokenize = (file: string, src: string): Array<Tok> => {
  const toks: Array<Tok> = []
  const indents = [0]
  let depth = 0
  let line = 1
  let i = 0
  let atLineStart = true
  const fail = (reason: string): never => {
    throw new PythonSourceError({ file, line, reason })
  }
  while (i < src.length) {
    if (atLineStart && depth === 0) {
      // Measure the indentation of a logical line; blank and comment-only lines do not count.
      let j = i
      let col = 0
      while (j < src.length && (src[j] === " " || src[j] === "\t")) {
        col = src[j] === "\t" ? (Math.floor(col / 8) + 1) * 8 : col + 1
        j++
      }
      if (j >= src.length) break
      if (src[j] === "\n" || src[j] === "#" || src[j] === "\r") {
        while (j < src.length && src[j] !== "\n") j++
        i = j + 1
        line++
        continue
      }
      if (col > indents[indents.length - 1]!) {
        indents.push(col)
        toks.push({ t: "indent", v: "", line })
      } else {
        while (col < indents[indents.length - 1]!) {
          indents.pop()
          toks.push({ t: "dedent", v: "", line })
        }
        if (col !== indents[indents.length - 1]) fail("inconsistent dedent")
      }
      i = j
      atLineStart = false
    }
    const c = src[i]!
    if (c === "\n") {
      line++
      i++
      if (depth === 0) {
        toks.push({ t: "newline", v: "", line: line - 1 })
        atLineStart = true
      }
      continue
    }
    if (c === " " || c === "\t" || c === "\r" || c === "\f") {
      i++
      continue
    }
    if (c === "#") {
      while (i < src.length && src[i] !== "\n") i++
      continue
    }
    if (c === "\\" && src[i + 1] === "\n") {
      i += 2
      line++
      continue
    }
    const s = STRING_START.exec(src.slice(i, i + 5))
    if (s !== null && (s[1] === "" || /^[rRbBuUfF]{1,2}$/.test(s[1]!))) {
      const prefix = s[1]!.toLowerCase()
      const quote = s[2]!
      const start = i + s[0].length
      const startLine = line
      let j = start
      for (;;) {
        if (j >= src.length) fail("unterminated string")
        const ch = src[j]!
        if (ch === "\\") {
          if (src[j + 1] === "\n") line++
          j += 2
          continue
        }
        if (src.startsWith(quote, j)) break
        if (ch === "\n") {
          if (quote.length === 1) fail("newline in a string")
          line++
        }
        j++
      }
      const body = src.slice(start, j)
      toks.push({ t: "str", v: unescape(body, prefix.includes("r"), fail), line: startLine, formatted: prefix.includes("f") })
      i = j + quote.length
      continue
    }
    const name = NAME.exec(src.slice(i, i + 200))
    if (name !== null) {
      toks.push({ t: "name", v: name[0], line })
      i += name[0].length
      continue
    }
    const num = /[0-9.]/.test(c) ? NUMBER.exec(src.slice(i, i + 64)) : null
    if (num !== null && num[0] !== ".") {
      toks.push({ t: "number", v: num[0], line })
      i += num[0].length
      continue
    }
    const op = OPS.find((o) => src.startsWith(o, i)) ?? c
    if (op === "(" || op === "[" || op === "{") depth++
    if (op === ")" || op === "]" || op === "}") depth = Math.max(0, depth - 1)
    toks.push({ t: "op", v: op, line })
    i += op.length
  }
  if (toks.length > 0 && toks[toks.length - 1]!.t !== "newline") toks.push({ t: "newline", v: "", line })
  while (indents.length > 1) {
    indents.pop()
    toks.push({ t: "dedent", v: "", line })
  }
  toks.push({ t: "end", v: "", line })
  return toks
}

// ---- statements and expressions ----

const COMPOUND = new Set(["if", "elif", "else", "for", "while", "try", "except", "finally", "with", "match", "case", "async"])

class Parser {
  private pos = 0
  constructor(private readonly file: string, private readonly toks: ReadonlyArray<Tok>) {}

  private get tok(): Tok {
    return this.toks[this.pos]!
  }
  private fail(reason: string): never {
    throw new PythonSourceError({ file: this.file, line: this.tok.line, reason })
  }
  /** Whether the current token is of kind `t` (a method, so that a check after moving on is not narrowed away). */
  private at(t: Tok["t"]): boolean {
    return this.tok.t === t
  }
  private isOp(v: string): boolean {
    return this.tok.t === "op" && this.tok.v === v
  }
  private isName(v: string): boolean {
    return this.tok.t === "name" && this.tok.v === v
  }
  private expectOp(v: string): void {
    if (!this.isOp(v)) this.fail(`expected '${v}', found '${this.tok.v || this.tok.t}'`)
    this.pos++
  }

  module(): ReadonlyArray<Stmt> {
    const body: Array<Stmt> = []
    while (this.tok.t !== "end") {
      if (this.tok.t === "newline" || this.tok.t === "dedent" || this.tok.t === "indent") {
        this.pos++
        continue
      }
      body.push(...this.statement())
    }
    return body
  }

  /** A block after `:`: an indented suite, or simple statements on the same line. */
  private block(): ReadonlyArray<Stmt> {
    this.expectOp(":")
    if (this.tok.t !== "newline") return this.simpleLine()
    this.pos++
    if (!this.at("indent")) this.fail("expected an indented block")
    this.pos++
    const body: Array<Stmt> = []
    while (!this.at("dedent") && !this.at("end")) {
      if (this.tok.t === "newline") {
        this.pos++
        continue
      }
      body.push(...this.statement())
    }
    if (this.at("dedent")) this.pos++
    return body
  }

  private statement(): ReadonlyArray<Stmt> {
    const line = this.tok.line
    const decorators: Array<Expr> = []
    while (this.isOp("@")) {
      this.pos++
      decorators.push(this.expr())
      if (this.tok.t !== "newline") this.fail("expected the end of a decorator line")
      this.pos++
    }
    if (this.isName("class")) {
      this.pos++
      const name = this.tok.v
      this.pos++
      let bases: ReadonlyArray<Expr> = []
      if (this.isOp("(")) bases = this.callArgs().args
      return [{ kind: "class", line, name, bases, decorators, body: this.block() }]
    }
    if (this.isName("async") && this.toks[this.pos + 1]?.v === "def") this.pos++
    if (this.isName("def")) {
      this.pos++
      const name = this.tok.v
      this.pos++
      const params = this.params()
      let returns: Expr | null = null
      if (this.isOp("->")) {
        this.pos++
        returns = this.expr()
      }
      return [{ kind: "def", line, name, decorators, params, returns, body: this.block() }]
    }
    if (decorators.length > 0) this.fail("a decorator must precede a def or a class")
    if (this.tok.t === "name" && COMPOUND.has(this.tok.v)) {
      // Skip the header; the block's declarations are not read (upstream declares at top level).
      this.skipToColon()
      this.block()
      return [{ kind: "other", line }]
    }
    return this.simpleLine()
  }

  /** Simple statements separated by `;` up to the end of the line. */
  private simpleLine(): ReadonlyArray<Stmt> {
    const out: Array<Stmt> = []
    for (;;) {
      out.push(this.simple())
      if (this.isOp(";")) {
        this.pos++
        if (this.tok.t === "newline") break
        continue
      }
      break
    }
    if (this.tok.t !== "newline" && this.tok.t !== "end") this.fail(`unexpected '${this.tok.v}'`)
    if (this.tok.t === "newline") this.pos++
    return out
  }

  private simple(): Stmt {
    const line = this.tok.line
    const keywordStatement = this.tok.t === "name" &&
      ["import", "from", "return", "raise", "pass", "break", "continue", "global", "nonlocal", "del", "assert", "yield"].includes(this.tok.v)
    if (keywordStatement) {
      this.skipStatement()
      return { kind: "other", line }
    }
    const start = this.pos
    if (this.tok.t === "name" && this.toks[this.pos + 1]?.t === "op") {
      const next = this.toks[this.pos + 1]!.v
      if (next === "=" || next === ":") {
        const target = this.tok.v
        this.pos += 2
        if (next === "=") {
          const value = this.exprList()
          if (this.isOp("=")) {
            // Chained assignment: only the first target is kept.
            this.skipStatement()
          }
          return { kind: "assign", line, target, annotation: null, value }
        }
        const annotation = this.expr()
        let value: Expr | null = null
        if (this.isOp("=")) {
          this.pos++
          value = this.exprList()
        }
        return { kind: "assign", line, target, annotation, value }
      }
    }
    this.pos = start
    const value = this.exprList()
    if (this.tok.t !== "newline" && !this.isOp(";")) this.skipStatement()
    return value.kind === "opaque" ? { kind: "other", line } : { kind: "expr", line, value }
  }

  private skipStatement(): void {
    while (this.tok.t !== "newline" && this.tok.t !== "end" && !this.isOp(";")) this.pos++
  }

  private skipToColon(): void {
    let depth = 0
    for (;;) {
      const t = this.tok
      if (t.t === "end" || t.t === "newline") this.fail("expected ':'")
      if (t.t === "op") {
        if (t.v === "(" || t.v === "[" || t.v === "{") depth++
        else if (t.v === ")" || t.v === "]" || t.v === "}") depth--
        else if (t.v === ":" && depth === 0) return
      }
      this.pos++
    }
  }

  private params(): ReadonlyArray<Param> {
    this.expectOp("(")
    const out: Array<Param> = []
    while (!this.isOp(")")) {
      let star: Param["star"] = ""
      if (this.isOp("*") || this.isOp("**")) {
        star = this.tok.v as "*" | "**"
        this.pos++
      }
      if (this.isOp("/") || (star === "*" && this.isOp(","))) {
        // A positional-only or keyword-only marker, not a parameter.
        this.pos++
        continue
      }
      if (this.tok.t !== "name") this.fail("expected a parameter name")
      const name = this.tok.v
      this.pos++
      let annotation: Expr | null = null
      let def: Expr | null = null
      if (this.isOp(":")) {
        this.pos++
        annotation = this.expr()
      }
      if (this.isOp("=")) {
        this.pos++
        def = this.expr()
      }
      out.push({ name, annotation, default: def, star })
      if (!this.isOp(")")) this.expectOp(",")
    }
    this.pos++
    return out
  }

  private callArgs(): { args: Array<Expr>; keywords: Array<{ name: string; value: Expr }> } {
    this.expectOp("(")
    const args: Array<Expr> = []
    const keywords: Array<{ name: string; value: Expr }> = []
    while (!this.isOp(")")) {
      if (this.tok.t === "name" && this.toks[this.pos + 1]?.t === "op" && this.toks[this.pos + 1]!.v === "=") {
        const name = this.tok.v
        this.pos += 2
        keywords.push({ name, value: this.expr() })
      } else if (this.isOp("*") || this.isOp("**")) {
        this.pos++
        this.expr()
        args.push({ kind: "opaque" })
      } else {
        args.push(this.expr())
        if (this.isName("for")) return this.skipBracket(")", args, keywords)
      }
      if (!this.isOp(")")) this.expectOp(",")
    }
    this.pos++
    return { args, keywords }
  }

  /** Skips to the bracket that closes the current one (a comprehension), marking its value opaque. */
  private skipBracket<A>(close: string, args: Array<Expr>, rest: A): { args: Array<Expr>; keywords: A } {
    let depth = 0
    while (!(depth === 0 && this.isOp(close))) {
      if (this.tok.t === "end") this.fail(`expected '${close}'`)
      if (this.isOp("(") || this.isOp("[") || this.isOp("{")) depth++
      if (this.isOp(")") || this.isOp("]") || this.isOp("}")) depth--
      this.pos++
    }
    this.pos++
    args.splice(0, args.length, { kind: "opaque" })
    return { args, keywords: rest }
  }

  /** Expressions separated by commas: a tuple when there is a comma. */
  private exprList(): Expr {
    const first = this.expr()
    if (!this.isOp(",")) return first
    const items = [first]
    while (this.isOp(",")) {
      this.pos++
      if (this.tok.t === "newline" || this.isOp("=") || this.isOp(";")) break
      items.push(this.expr())
    }
    return { kind: "tuple", items }
  }

  private expr(): Expr {
    if (this.isName("lambda")) {
      // Its parameters up to the ':', then its body up to the next ',' or closing bracket.
      while (!this.isOp(":")) {
        if (this.tok.t === "newline" || this.tok.t === "end") this.fail("expected ':' in a lambda")
        this.pos++
      }
      this.pos++
      this.skipExpression(false)
      return { kind: "opaque" }
    }
    const value = this.binary(0)
    if (this.isName("if")) {
      // A conditional expression: its value depends on run time.
      this.pos++
      this.binary(0)
      if (this.isName("else")) {
        this.pos++
        this.expr()
      }
      return { kind: "opaque" }
    }
    return value
  }

  /** Skips an expression to the next comma (or colon, with `colon`) or closing bracket at this depth. */
  private skipExpression(colon: boolean): void {
    let depth = 0
    for (;;) {
      const t = this.tok
      if (t.t === "end" || (t.t === "newline" && depth === 0)) return
      if (t.t === "op") {
        if (t.v === "(" || t.v === "[" || t.v === "{") depth++
        else if (t.v === ")" || t.v === "]" || t.v === "}") {
          if (depth === 0) return
          depth--
        } else if ((t.v === "," || (colon && t.v === ":")) && depth === 0) return
      }
      this.pos++
    }
  }

  private static readonly PRECEDENCE: Record<string, number> = {
    or: 1, and: 2, in: 4, is: 4, "==": 4, "!=": 4, "<": 4, ">": 4, "<=": 4, ">=": 4, "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8, "+": 9, "-": 9,
    "*": 10, "/": 10, "//": 10, "%": 10, "@": 10, "**": 12
  }

  private binary(min: number): Expr {
    let left = this.unary()
    for (;;) {
      const t = this.tok
      const op = t.t === "op" || (t.t === "name" && (t.v === "or" || t.v === "and" || t.v === "in" || t.v === "is" || t.v === "not")) ? t.v : null
      if (op === null) return left
      const prec = op === "not" ? 4 : Parser.PRECEDENCE[op]
      if (prec === undefined || prec <= min) return left
      this.pos++
      if (op === "not" || (op === "is" && this.isName("not"))) this.pos++
      const right = this.binary(op === "**" ? prec - 1 : prec)
      left = op === "|" ? { kind: "union", left, right } : { kind: "opaque" }
    }
  }

  private unary(): Expr {
    if (this.isOp("-") || this.isOp("+") || this.isOp("~")) {
      const op = this.tok.v
      this.pos++
      return { kind: "unary", op, operand: this.unary() }
    }
    if (this.isName("not")) {
      this.pos++
      this.unary()
      return { kind: "opaque" }
    }
    if (this.isName("await")) this.pos++
    return this.postfix(this.atom())
  }

  private postfix(value: Expr): Expr {
    for (;;) {
      if (this.isOp(".")) {
        this.pos++
        const attr = this.tok.v
        this.pos++
        value = { kind: "attribute", value, attr }
      } else if (this.isOp("(")) {
        const { args, keywords } = this.callArgs()
        value = { kind: "call", func: value, args, keywords }
      } else if (this.isOp("[")) {
        this.pos++
        const index: Array<Expr> = []
        while (!this.isOp("]")) {
          index.push(this.isOp(":") ? { kind: "opaque" } : this.expr())
          if (this.isOp(":")) {
            // A slice: not a type.
            this.pos++
            if (!this.isOp("]")) this.expr()
            index.splice(0, index.length, { kind: "opaque" })
          }
          if (!this.isOp("]")) this.expectOp(",")
        }
        this.pos++
        value = { kind: "subscript", value, index }
      } else {
        return value
      }
    }
  }

  private atom(): Expr {
    const t = this.tok
    if (t.t === "str") {
      // Adjacent literals are one string; an f-string's value is only known at run time.
      let value = ""
      let formatted = false
      while (this.tok.t === "str") {
        const s = this.tok as Extract<Tok, { t: "str" }>
        value += s.v
        formatted ||= s.formatted
        this.pos++
      }
      return formatted ? { kind: "opaque" } : { kind: "str", value }
    }
    if (t.t === "number") {
      this.pos++
      return { kind: "number", text: t.v }
    }
    if (t.t === "name") {
      this.pos++
      if (t.v === "None") return { kind: "constant", value: null }
      if (t.v === "True") return { kind: "constant", value: true }
      if (t.v === "False") return { kind: "constant", value: false }
      return { kind: "name", id: t.v }
    }
    if (t.t === "op" && (t.v === "(" || t.v === "[" || t.v === "{")) {
      const close = t.v === "(" ? ")" : t.v === "[" ? "]" : "}"
      this.pos++
      const items: Array<Expr> = []
      const entries: Array<readonly [Expr, Expr]> = []
      let comma = false
      while (!this.isOp(close)) {
        if (this.isOp("*") || this.isOp("**")) {
          this.pos++
          this.expr()
          items.push({ kind: "opaque" })
        } else {
          const item = this.expr()
          if (t.v === "{" && this.isOp(":")) {
            this.pos++
            entries.push([item, this.expr()])
          } else {
            items.push(item)
          }
        }
        if (this.isName("for")) {
          this.skipBracket(close, items, null)
          return { kind: "opaque" }
        }
        if (!this.isOp(close)) {
          this.expectOp(",")
          comma = true
        }
      }
      this.pos++
      if (t.v === "(") return items.length === 1 && !comma ? items[0]! : { kind: "tuple", items }
      if (t.v === "[") return { kind: "list", items }
      return items.length === 0 ? { kind: "dict", entries } : { kind: "opaque" }
    }
    if (t.t === "op" && t.v === "...") {
      this.pos++
      return { kind: "name", id: "..." }
    }
    return this.fail(`unexpected '${t.v || t.t}'`)
  }
}

/** The declarations of a Python source file. */
export const parseModule = (file: string, src: string): Either.Either<ReadonlyArray<Stmt>, PythonSourceError> => {
  try {
    return Either.right(new Parser(file, tokenize(file, src)).module())
  } catch (e) {
    if (e instanceof PythonSourceError) return Either.left(e)
    // A bug of this reader, not of the file: say where.
    return Either.left(new PythonSourceError({ file, line: 0, reason: `cannot read: ${e instanceof Error ? e.message : String(e)}` }))
  }
}

/** The text of a module-level string constant `NAME = "..."` (or `"""...""".strip()` with `strip`). */
export const stringConstant = (body: ReadonlyArray<Stmt>, name: string): { readonly value: string; readonly stripped: boolean } | null => {
  for (const s of body) {
    if (s.kind !== "assign" || s.target !== name || s.value === null) continue
    const v = s.value
    if (v.kind === "str") return { value: v.value, stripped: false }
    if (v.kind === "call" && v.args.length === 0 && v.func.kind === "attribute" && v.func.attr === "strip" && v.func.value.kind === "str") {
      return { value: pyStrip(v.func.value.value), stripped: true }
    }
  }
  return null
}

/** Python's `str.strip()` with no argument: Unicode whitespace (as `\s`, plus the separators JS lacks) at both ends. */
export const pyStrip = (s: string): string => s.replace(/^[\s\x1c-\x1f\x85]+|[\s\x1c-\x1f\x85]+$/gu, "")

/** Python's `str.lstrip()` with no argument. */
export const pyLstrip = (s: string): string => s.replace(/^[\s\x1c-\x1f\x85]+/u, "")
