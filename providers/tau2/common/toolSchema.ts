/**
 * tau2-bench's tool files rendered from its Python source, as upstream makes them by running it:
 * `tools.json` is `[tool.openai_schema for tool in toolkit.get_tools().values()]`, whose
 * `parameters` is pydantic's `model_json_schema()` of a model built from the method's signature
 * and docstring (src/tau2/environment/tool.py), and `tools-types.json` each tool's ToolType and
 * `mutates_state` (src/tau2/environment/toolkit.py). Both are written as `json.dumps(..., indent=2)`
 * and a newline. What pydantic does is followed for the types upstream's tools use (str, int,
 * float, bool, lists, dicts, Optional and unions, Literal, Annotated, str Enums, BaseModels);
 * any other type is refused, never guessed.
 */
import { Either } from "effect"
import { cleandoc, parseDocstring } from "./docstring.ts"
import { docstringOf, type Expr, type Param, parseModule, pyStrip, type Stmt } from "./pythonSource.ts"

/** A JSON value as Python's json module writes it; a float keeps Python's text (`1.0`). */
export type PyJson = null | boolean | string | number | PyFloat | ReadonlyArray<PyJson> | { readonly [key: string]: PyJson }
export class PyFloat {
  constructor(readonly text: string) {}
}

/** `json.dumps(value, indent=2)` for ASCII text (what upstream's files hold; anything else is escaped as Python does). */
export const pyJsonDumps = (value: PyJson, indent = 2): string => {
  const str = (s: string): string =>
    "\"" + s.replace(/[\\"\u0000-\u001f\u007f-\uffff]/g, (c) => {
      switch (c) {
        case "\\":
          return "\\\\"
        case "\"":
          return "\\\""
        case "\n":
          return "\\n"
        case "\r":
          return "\\r"
        case "\t":
          return "\\t"
        case "\b":
          return "\\b"
        case "\f":
          return "\\f"
        case "\u007f":
          return c
        default:
          return "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0")
      }
    }) + "\""
  const write = (v: PyJson, depth: number): string => {
    if (v === null) return "null"
    if (v === true) return "true"
    if (v === false) return "false"
    if (typeof v === "string") return str(v)
    if (typeof v === "number") return String(v)
    if (v instanceof PyFloat) return v.text
    const pad = "\n" + " ".repeat(indent * (depth + 1))
    const end = "\n" + " ".repeat(indent * depth)
    if (Array.isArray(v)) return v.length === 0 ? "[]" : "[" + v.map((x) => pad + write(x, depth + 1)).join(",") + end + "]"
    const entries = Object.entries(v as { readonly [key: string]: PyJson })
    return entries.length === 0 ? "{}" : "{" + entries.map(([k, x]) => pad + str(k) + ": " + write(x, depth + 1)).join(",") + end + "}"
  }
  return write(value, 0)
}

/** pydantic's sort of a JSON schema: keys in order except under `properties` and `default`. */
const sortSchema = (value: PyJson, parent: string | null): PyJson => {
  if (Array.isArray(value)) return value.map((x) => sortSchema(x, parent))
  if (value === null || typeof value !== "object" || value instanceof PyFloat) return value
  const obj = value as { readonly [key: string]: PyJson }
  const keys = Object.keys(obj)
  if (parent !== "properties" && parent !== "default") keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const out: Record<string, PyJson> = {}
  for (const k of keys) out[k] = sortSchema(obj[k]!, k)
  return out
}

/** pydantic's default field title: `name.title().replace("_", " ")`. */
export const fieldTitle = (name: string): string => {
  let out = ""
  let prevCased = false
  for (const c of name) {
    const cased = c.toLowerCase() !== c.toUpperCase()
    out += cased ? (prevCased ? c.toLowerCase() : c.toUpperCase()) : c
    prevCased = cased
  }
  return out.replace(/_/g, " ")
}

class SchemaError {
  constructor(readonly reason: string) {}
}
const refuse = (reason: string): never => {
  throw new SchemaError(reason)
}

type Decl = { readonly kind: "class"; readonly stmt: Extract<Stmt, { kind: "class" }> } | { readonly kind: "alias"; readonly value: Expr }

/** The module-level names of the sources, the first module's first. */
class Scope {
  private readonly names = new Map<string, Decl>()
  constructor(modules: ReadonlyArray<ReadonlyArray<Stmt>>) {
    for (const body of [...modules].reverse()) {
      for (const s of body) {
        if (s.kind === "class") this.names.set(s.name, { kind: "class", stmt: s })
        else if (s.kind === "assign" && s.value !== null && s.annotation === null) this.names.set(s.target, { kind: "alias", value: s.value })
      }
    }
  }
  get(name: string): Decl | undefined {
    return this.names.get(name)
  }
  classOf(name: string): Extract<Stmt, { kind: "class" }> | undefined {
    const d = this.names.get(name)
    return d?.kind === "class" ? d.stmt : undefined
  }
  /** Whether a class derives (here or through its bases) from one of `roots`. */
  derives(cls: Extract<Stmt, { kind: "class" }>, roots: ReadonlySet<string>, seen = new Set<string>()): boolean {
    if (seen.has(cls.name)) return false
    seen.add(cls.name)
    return cls.bases.some((b) => {
      const n = nameOf(b)
      if (n === null) return false
      if (roots.has(n)) return true
      const base = this.classOf(n)
      return base !== undefined && this.derives(base, roots, seen)
    })
  }
}

const nameOf = (e: Expr): string | null => (e.kind === "name" ? e.id : e.kind === "attribute" ? e.attr : null)

const MODEL_ROOTS = new Set(["BaseModel", "DB"])
const ENUM_ROOTS = new Set(["Enum", "StrEnum"])

/** A type's schema, and whether a field of it gets a title (pydantic: not when it is a model or an enum, even if nullable). */
interface Typed {
  readonly schema: Record<string, PyJson>
  readonly titled: boolean
  /** The description an `Annotated[..., Field(description=...)]` carries. */
  readonly description?: string
}

const NULL: Record<string, PyJson> = { type: "null" }

/** Builds a model's JSON schema the way pydantic does for the types above. */
class Generator {
  readonly defs = new Map<string, Record<string, PyJson>>()
  constructor(readonly scope: Scope) {}

  private anyOf(members: ReadonlyArray<Record<string, PyJson>>): Record<string, PyJson> {
    const flat: Array<Record<string, PyJson>> = []
    for (const m of members) {
      const keys = Object.keys(m)
      if (keys.length === 1 && keys[0] === "anyOf") flat.push(...(m.anyOf as ReadonlyArray<Record<string, PyJson>>))
      else flat.push(m)
    }
    const unique = flat.filter((m, i) => flat.findIndex((o) => JSON.stringify(o) === JSON.stringify(m)) === i)
    return unique.length === 1 ? unique[0]! : { anyOf: unique }
  }

  type(e: Expr): Typed {
    switch (e.kind) {
      case "constant":
        if (e.value === null) return { schema: { ...NULL }, titled: true }
        break
      case "name":
      case "attribute": {
        const n = nameOf(e)!
        const simple: Record<string, Record<string, PyJson>> = {
          str: { type: "string" },
          int: { type: "integer" },
          float: { type: "number" },
          bool: { type: "boolean" },
          Any: {},
          dict: { additionalProperties: true, type: "object" },
          Dict: { additionalProperties: true, type: "object" },
          list: { items: {}, type: "array" },
          List: { items: {}, type: "array" }
        }
        if (simple[n] !== undefined && this.scope.get(n) === undefined) return { schema: { ...simple[n]! }, titled: true }
        const decl = this.scope.get(n)
        if (decl === undefined) return refuse(`the type ${n} is not defined in the pinned sources`)
        if (decl.kind === "alias") return this.type(decl.value)
        return this.classRef(decl.stmt)
      }
      case "union": {
        const parts = [this.type(e.left), this.type(e.right)]
        return this.union(parts)
      }
      case "subscript": {
        const head = nameOf(e.value)
        const args = e.index.length === 1 && e.index[0]!.kind === "tuple" ? e.index[0]!.items : e.index
        switch (head) {
          case "List":
          case "list":
          case "Sequence":
            return { schema: { items: this.type(args[0]!).schema, type: "array" }, titled: true }
          case "Dict":
          case "dict": {
            if (args.length !== 2) return refuse("a dict type needs a key and a value type")
            const key = this.type(args[0]!).schema
            if (key.type !== "string" || Object.keys(key).length !== 1) return refuse("only str keys are rendered")
            return { schema: { additionalProperties: this.type(args[1]!).schema, type: "object" }, titled: true }
          }
          case "Optional":
            return this.union([this.type(args[0]!), { schema: { ...NULL }, titled: true }])
          case "Union":
            return this.union(args.map((a) => this.type(a)))
          case "Literal":
            return { schema: this.literal(args), titled: true }
          case "Annotated": {
            const inner = this.type(args[0]!)
            const field = args.slice(1).find((a) => a.kind === "call" && nameOf(a.func) === "Field")
            const desc = field?.kind === "call" ? field.keywords.find((k) => k.name === "description")?.value : undefined
            return desc?.kind === "str" ? { ...inner, description: desc.value } : inner
          }
        }
        return refuse(`the type ${head ?? "?"}[...] is not rendered`)
      }
      default:
        break
    }
    return refuse(`a type expression of kind ${e.kind} is not rendered`)
  }

  private union(parts: ReadonlyArray<Typed>): Typed {
    const isNull = (t: Typed) => t.schema.type === "null" && Object.keys(t.schema).length === 1
    const rest = parts.filter((t) => !isNull(t))
    // pydantic: `X | None` is a nullable X, which is titled as X is; a union of several is titled.
    const titled = rest.length === 1 ? rest[0]!.titled : true
    return { schema: this.anyOf(parts.map((t) => t.schema)), titled }
  }

  private literal(args: ReadonlyArray<Expr>): Record<string, PyJson> {
    const values = args.map((a) => this.value(a))
    const out: Record<string, PyJson> = values.length === 1 ? { const: values[0]! } : { enum: values }
    const kinds = new Set(values.map((v) => (v === null ? "null" : v instanceof PyFloat ? "number" : typeof v === "number" ? "integer" : typeof v)))
    if (kinds.size === 1) {
      const k = [...kinds][0]!
      const type = k === "string" ? "string" : k === "integer" ? "integer" : k === "number" ? "number" : k === "boolean" ? "boolean" : k === "null" ? "null" : null
      if (type !== null) out.type = type
    }
    return out
  }

  /** A literal Python value as JSON (an Enum member is its value). */
  value(e: Expr): PyJson {
    switch (e.kind) {
      case "str":
        return e.value
      case "constant":
        return e.value
      case "number":
        return pyNumber(e.text)
      case "unary": {
        const v = this.value(e.operand)
        if (e.op === "-" && typeof v === "number") return -v
        if (e.op === "-" && v instanceof PyFloat) return new PyFloat(v.text.startsWith("-") ? v.text.slice(1) : "-" + v.text)
        break
      }
      case "list":
      case "tuple":
        return e.items.map((x) => this.value(x))
      case "dict":
        if (e.entries.length === 0) return {}
        break
      case "attribute": {
        const cls = e.value.kind === "name" ? this.scope.classOf(e.value.id) : undefined
        if (cls !== undefined && this.scope.derives(cls, ENUM_ROOTS)) return this.enumMembers(cls).find(([m]) => m === e.attr)?.[1] ?? refuse(`${cls.name} has no member ${e.attr}`)
        break
      }
      default:
        break
    }
    return refuse(`a default of kind ${e.kind} is not rendered`)
  }

  /** An Enum's members in order: its plain assignments but `_sunder_` and `__dunder__` names (a `_single` name is a member). */
  private enumMembers(cls: Extract<Stmt, { kind: "class" }>): ReadonlyArray<readonly [string, PyJson]> {
    if (cls.body.some((s) => s.kind === "assign" && s.target === "_ignore_")) return refuse(`${cls.name}: an Enum with _ignore_ is not rendered`)
    const special = (n: string) => /^_[^_].*_$/.test(n) || /^__.*__$/.test(n)
    return cls.body.flatMap((s) =>
      s.kind === "assign" && s.annotation === null && s.value !== null && !special(s.target) ? [[s.target, this.value(s.value)] as const] : []
    )
  }

  private classRef(cls: Extract<Stmt, { kind: "class" }>): Typed {
    const ref = { $ref: `#/$defs/${cls.name}` }
    if (this.defs.has(cls.name)) return { schema: ref, titled: false }
    if (this.scope.derives(cls, ENUM_ROOTS)) {
      const doc = docstringOf(cls.body)
      const members = this.enumMembers(cls).map(([, v]) => v)
      const def: Record<string, PyJson> = { title: cls.name }
      if (doc !== null && cleandoc(doc) !== "") def.description = cleandoc(doc)
      def.enum = members
      if (members.every((m) => typeof m === "string") || cls.bases.some((b) => nameOf(b) === "str")) def.type = "string"
      else if (members.every((m) => typeof m === "number")) def.type = "integer"
      this.defs.set(cls.name, def)
      return { schema: ref, titled: false }
    }
    if (this.scope.derives(cls, MODEL_ROOTS)) {
      this.defs.set(cls.name, {}) // placed first: a model that refers to itself gets a $ref
      this.defs.set(cls.name, this.model(cls, cls.name))
      return { schema: ref, titled: false }
    }
    return refuse(`the class ${cls.name} is neither a pydantic model nor an Enum`)
  }

  /** A pydantic model's fields in pydantic's order: the bases' first, an override keeping its place. */
  private fields(cls: Extract<Stmt, { kind: "class" }>): Map<string, Extract<Stmt, { kind: "assign" }>> {
    const out = new Map<string, Extract<Stmt, { kind: "assign" }>>()
    for (const b of [...cls.bases].reverse()) {
      const n = nameOf(b)
      const base = n === null ? undefined : this.scope.classOf(n)
      if (base !== undefined && this.scope.derives(base, MODEL_ROOTS)) for (const [k, v] of this.fields(base)) out.set(k, v)
    }
    for (const s of cls.body) {
      if (s.kind === "assign" && s.annotation !== null && !s.target.startsWith("_") && !isClassVar(s.annotation)) out.set(s.target, s)
    }
    return out
  }

  /** `model_json_schema()` of a model (before the sort and the `$defs`). */
  model(cls: Extract<Stmt, { kind: "class" }>, title: string): Record<string, PyJson> {
    const properties: Record<string, PyJson> = {}
    const required: Array<string> = []
    for (const [name, f] of this.fields(cls)) {
      const field = fieldSpec(f.value)
      if (field.required) required.push(name)
      properties[name] = this.field(name, f.annotation!, field.default, field.description)
    }
    const out: Record<string, PyJson> = { properties }
    if (required.length > 0) out.required = required
    out.title = title
    out.type = "object"
    const doc = docstringOf(cls.body)
    if (doc !== null) out.description = cleandoc(doc)
    const extra = modelExtra(this.scope, cls)
    if (extra === "forbid") out.additionalProperties = false
    else if (extra === "allow") out.additionalProperties = true
    return out
  }

  field(name: string, annotation: Expr, def: Expr | null, description: string | null): Record<string, PyJson> {
    const typed = this.type(annotation)
    const out: Record<string, PyJson> = { ...typed.schema }
    if (def !== null) out.default = this.value(def)
    const desc = description ?? typed.description ?? null
    if (desc !== null) out.description = desc
    if (typed.titled) out.title = fieldTitle(name)
    return out
  }
}

const isClassVar = (e: Expr): boolean => (e.kind === "subscript" ? nameOf(e.value) === "ClassVar" : nameOf(e) === "ClassVar")

/** `model_config = ConfigDict(extra=...)` of a model or, as pydantic inherits it, of its nearest base that sets it. */
const modelExtra = (scope: Scope, cls: Extract<Stmt, { kind: "class" }>): string | null => {
  for (const s of cls.body) {
    if (s.kind === "assign" && s.target === "model_config" && s.value?.kind === "call") {
      const extra = s.value.keywords.find((k) => k.name === "extra")?.value
      if (extra?.kind === "str") return extra.value
    }
  }
  for (const b of cls.bases) {
    const n = nameOf(b)
    const base = n === null ? undefined : scope.classOf(n)
    const extra = base === undefined ? null : modelExtra(scope, base)
    if (extra !== null) return extra
  }
  return null
}

/** What a field's right-hand side says: `Field(...)`, a plain default, or nothing. */
const fieldSpec = (value: Expr | null): { readonly required: boolean; readonly default: Expr | null; readonly description: string | null } => {
  if (value === null) return { required: true, default: null, description: null }
  if (value.kind === "call" && nameOf(value.func) === "Field") {
    const desc = value.keywords.find((k) => k.name === "description")?.value
    const description = desc === undefined ? null : desc.kind === "str" ? desc.value : refuse("a Field description that is not a string literal")
    const positional = value.args[0]
    const keyword = value.keywords.find((k) => k.name === "default")?.value
    const def = positional ?? keyword
    if (value.keywords.some((k) => k.name === "default_factory")) return { required: false, default: null, description }
    if (def === undefined || (def.kind === "name" && def.id === "...")) return { required: true, default: null, description }
    return { required: false, default: def, description }
  }
  return { required: false, default: value, description: null }
}

const pyNumber = (text: string): number | PyFloat => {
  const clean = text.replace(/_/g, "")
  if (/^\d+$/.test(clean)) return Number(clean)
  if (/^0[xX][0-9a-fA-F]+$/.test(clean)) return Number(clean)
  const n = Number(clean)
  if (!Number.isFinite(n) || /[jJ]/.test(clean)) return refuse(`the number ${text} is not rendered`)
  // Python's repr of a float: the shortest round trip, with ".0" when integral.
  if (Number.isInteger(n) && Math.abs(n) < 1e16) return new PyFloat(`${n}.0`)
  const s = String(n)
  return s.includes("e") ? refuse(`the float ${text} is not rendered`) : new PyFloat(s)
}

/** A tool's entry of `tools.json`. */
const openAiSchema = (gen: Generator, method: Extract<Stmt, { kind: "def" }>): PyJson => {
  const doc = Either.getOrElse(parseDocstring(docstringOf(method.body)), (why) => refuse(`${method.name}: ${why}`))
  const params = method.params.filter((p, i) => !(i === 0 && p.name === "self"))
  const properties: Record<string, PyJson> = {}
  const required: Array<string> = []
  gen.defs.clear()
  for (const p of params) {
    if (p.star !== "") return refuse(`${method.name}: *args and **kwargs are not rendered`)
    if (p.default === null) required.push(p.name)
    properties[p.name] = gen.field(p.name, p.annotation ?? { kind: "name", id: "Any" }, p.default, doc.params.get(p.name) ?? null)
  }
  const parameters: Record<string, PyJson> = {}
  if (gen.defs.size > 0) parameters.$defs = Object.fromEntries(gen.defs)
  parameters.properties = properties
  if (required.length > 0) parameters.required = required
  parameters.title = "parameters"
  parameters.type = "object"
  const description = doc.shortDescription === null
    ? method.name
    : doc.longDescription === null
    ? doc.shortDescription
    : doc.shortDescription + "\n\n" + doc.longDescription
  return { type: "function", function: { name: method.name, description, parameters: sortSchema(parameters, null) } }
}

export interface ToolEntry {
  readonly method: Extract<Stmt, { kind: "def" }>
  readonly type: string
  readonly mutatesState: boolean
  readonly discoverable: boolean
}

/** A toolkit class's tools in `_func_tools` order: its own in definition order, then its bases' that it does not redefine. */
const toolsOf = (scope: Scope, cls: Extract<Stmt, { kind: "class" }>): Map<string, ToolEntry> => {
  const out = new Map<string, ToolEntry>()
  for (const s of cls.body) {
    if (s.kind !== "def") continue
    for (const d of s.decorators) {
      const call = d.kind === "call" ? d : null
      const fn = nameOf(call === null ? d : call.func)
      if (fn !== "is_tool" && fn !== "is_discoverable_tool") continue
      const typeArg = call?.keywords.find((k) => k.name === "tool_type")?.value ?? call?.args[0]
      const type = typeArg === undefined ? "read" : typeArg.kind === "attribute" ? typeArg.attr.toLowerCase() : refuse(`${s.name}: a tool type that is not ToolType.X`)
      const mutates = call?.keywords.find((k) => k.name === "mutates_state")?.value ?? call?.args[1]
      const mutatesState = mutates === undefined || (mutates.kind === "constant" && mutates.value === null)
        ? type === "write"
        : mutates.kind === "constant" && typeof mutates.value === "boolean"
        ? mutates.value
        : refuse(`${s.name}: mutates_state is not a literal`)
      out.set(s.name, { method: s, type, mutatesState, discoverable: fn === "is_discoverable_tool" })
    }
  }
  for (const b of cls.bases) {
    const n = nameOf(b)
    const base = n === null ? undefined : scope.classOf(n)
    if (base === undefined) continue
    for (const [name, entry] of toolsOf(scope, base)) {
      // A tool the class redefines keeps its place and is the class's own (upstream looks it up on the instance).
      if (!out.has(name)) out.set(name, entry)
    }
  }
  return out
}

export interface ToolFiles {
  /** `tools.json`. */
  readonly tools: string
  /** `tools-types.json`. */
  readonly types: string
}

export interface Source {
  readonly file: string
  readonly text: string
}

/**
 * The tool files of the toolkit class `className`, defined in the first of `sources`; the other
 * sources are the modules its types come from (data models).
 */
export const renderToolFiles = (sources: ReadonlyArray<Source>, className: string): Either.Either<ToolFiles, string> =>
  inScope(sources, className, (scope) => {
    const cls = scope.classOf(className) ?? refuse(`no class ${className} in ${sources[0]?.file}`)
    const gen = new Generator(scope)
    const tools = [...toolsOf(scope, cls).values()].filter((t) => !t.discoverable)
    const schemas = tools.map((t) => openAiSchema(gen, t.method))
    const types = tools.map((t): PyJson => ({ name: t.method.name, type: t.type, mutates_state: t.mutatesState }))
    return { tools: pyJsonDumps(schemas) + "\n", types: pyJsonDumps(types) + "\n" }
  })

/** Runs `render` over the declarations of `sources`; a source that does not parse, or a refusal, is the Left (named by `what`). */
const inScope = <A>(sources: ReadonlyArray<Source>, what: string, render: (scope: Scope) => A): Either.Either<A, string> => {
  const modules: Array<ReadonlyArray<Stmt>> = []
  for (const s of sources) {
    const parsed = parseModule(s.file, s.text)
    if (Either.isLeft(parsed)) return Either.left(parsed.left.message)
    modules.push(parsed.right)
  }
  try {
    return Either.right(render(new Scope(modules)))
  } catch (e) {
    if (e instanceof SchemaError) return Either.left(`${what}: ${e.reason}`)
    return Either.left(`${what}: cannot render: ${e instanceof Error ? e.message : String(e)}`)
  }
}

/**
 * banking's `parse_discoverable_tool_docstring`: a discoverable tool's name, its description (the
 * docstring before `Args:`), its parameters (`name (type[, optional]): description` lines) and a
 * success message (the first line after `Returns:`).
 */
const discoverableInfo = (method: Extract<Stmt, { kind: "def" }>): PyJson => {
  const raw = docstringOf(method.body)
  const doc = raw === null ? "" : cleandoc(raw)
  const args = /\n\s*Args:\s*\n/.exec(doc)
  const description = pyStrip(args === null ? doc : doc.slice(0, args.index))
  const parameters: Record<string, PyJson> = {}
  let successMessage = "Action completed successfully."
  if (args !== null) {
    const remaining = doc.slice(args.index + args[0].length)
    const returns = /\n\s*Returns:\s*\n/.exec(remaining)
    const section = returns === null ? remaining : remaining.slice(0, returns.index)
    if (returns !== null) successMessage = pyStrip(pyStrip(remaining.slice(returns.index + returns[0].length)).split("\n")[0]!)
    for (const m of section.matchAll(/^\s*(\w+)\s*(?:\(([^)]+)\))?\s*:\s*(.+?)$/gm)) {
      const typeInfo = m[2] ?? "string"
      const type = pyStrip(typeInfo.replace(/,?\s*optional/gi, ""))
      parameters[m[1]!] = { type: type === "" ? "string" : type, description: pyStrip(m[3]!), required: !typeInfo.toLowerCase().includes("optional") }
    }
  }
  return { name: method.name, description, parameters, success_message: successMessage }
}

/**
 * `discoverable-tools.json`: each toolkit's discoverable tools in `_func_tools` order, as
 * `{owner, name, type, mutates_state, tool_info}`, the toolkits in the order given.
 */
export const renderDiscoverableTools = (
  sources: ReadonlyArray<Source>,
  toolkits: ReadonlyArray<{ readonly className: string; readonly owner: string }>
): Either.Either<string, string> =>
  inScope(sources, "discoverable tools", (scope) => {
    const entries = toolkits.flatMap(({ className, owner }) => {
      const cls = scope.classOf(className) ?? refuse(`no class ${className}`)
      return [...toolsOf(scope, cls).values()].filter((t) => t.discoverable).map((t): PyJson => ({
        owner,
        name: t.method.name,
        type: t.type,
        mutates_state: t.mutatesState,
        tool_info: discoverableInfo(t.method)
      }))
    })
    return pyJsonDumps(entries) + "\n"
  })

export type { Param }
