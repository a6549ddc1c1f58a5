/**
 * GorillaFileSystem: a tree of directories and files, a current directory, and the shell-like
 * commands upstream implements over them.
 *
 * Upstream's tree is a graph of objects, and some commands share objects: `cp` of a directory
 * gives the copy a new contents dict holding the same children (writing a file then shows in
 * both), and `mv` of a directory gives the new directory the very same contents dict, while the
 * children's parent pointers still name the old directory (so `cd ..` and `pwd` inside it go
 * through the old one). So the state here is a persistent heap of nodes addressed by reference,
 * directories pointing at a contents node, and only what changes is copied.
 */
import { type Api, dict, type LongContext, type Method, type Outcome, type Param } from "./api.ts"
import { registerCanon } from "./canon.ts"
import {
  asStr,
  formatFixed,
  hashKey,
  noAttribute,
  type Py,
  PyDict,
  pyEq,
  PyError,
  pyIn,
  pyIter,
  pyLen,
  type PyObject,
  pyStr,
  pyCompare,
  truthy,
  typeError,
  typeName

} from "./py.ts"

type Ref = number

interface FileNode {
  readonly kind: "file"
  readonly name: Py
  readonly content: Py
}
interface DirNode {
  readonly kind: "dir"
  readonly name: Py
  readonly parent: Ref | null
  readonly contents: Ref
}
interface ContentsNode {
  readonly kind: "contents"
  /** Child name → reference of the child (a file or directory node). */
  readonly entries: ReadonlyMap<string, readonly [Py, Ref]>
}
type Node = FileNode | DirNode | ContentsNode

export interface FileSystemState {
  readonly long_context: boolean
  readonly heap: ReadonlyMap<Ref, Node>
  readonly root: Ref
  readonly cwd: Ref
  readonly next: Ref
}

// Contents are keyed like a Python dict: by the name's hash identity
const keyOf = hashKey

/** A copy-on-write view of the heap for one command; `state()` gives the state after it. */
class Draft {
  private heap: Map<Ref, Node> | undefined
  constructor(private readonly base: FileSystemState, public cwd: Ref, public next: Ref) {}
  get(ref: Ref): Node {
    return (this.heap ?? this.base.heap).get(ref) as Node
  }
  set(ref: Ref, node: Node): void {
    this.heap ??= new Map(this.base.heap)
    this.heap.set(ref, node)
  }
  alloc(node: Node): Ref {
    const ref = this.next++
    this.set(ref, node)
    return ref
  }
  state(): FileSystemState {
    if (this.heap === undefined && this.cwd === this.base.cwd) return this.base
    return { ...this.base, heap: this.heap ?? this.base.heap, cwd: this.cwd, next: this.next }
  }
  dir(ref: Ref): DirNode {
    return this.get(ref) as DirNode
  }
  entries(dir: Ref): ReadonlyMap<string, readonly [Py, Ref]> {
    return (this.get(this.dir(dir).contents) as ContentsNode).entries
  }
  has(dir: Ref, name: Py): boolean {
    return this.entries(dir).has(keyOf(name))
  }
  child(dir: Ref, name: Py): Ref | undefined {
    return this.entries(dir).get(keyOf(name))?.[1]
  }
  /** `_get_item`: "." is the directory itself. */
  item(dir: Ref, name: Py): Ref | undefined {
    if (pyEq(name, ".")) return dir
    return this.child(dir, name)
  }
  isDir(ref: Ref | undefined): ref is Ref {
    return ref !== undefined && this.get(ref).kind === "dir"
  }
  isFile(ref: Ref | undefined): ref is Ref {
    return ref !== undefined && this.get(ref).kind === "file"
  }
  setEntries(dir: Ref, entries: ReadonlyMap<string, readonly [Py, Ref]>): void {
    this.set(this.dir(dir).contents, { kind: "contents", entries })
  }
  put(dir: Ref, name: Py, ref: Ref): void {
    const entries = new Map(this.entries(dir))
    entries.set(keyOf(name), [entries.get(keyOf(name))?.[0] ?? name, ref])
    this.setEntries(dir, entries)
  }
  pop(dir: Ref, name: Py): void {
    const entries = new Map(this.entries(dir))
    entries.delete(keyOf(name))
    this.setEntries(dir, entries)
  }
  addFile(dir: Ref, name: Py, content: Py): void {
    if (this.has(dir, name)) throw new PyError("ValueError", `File '${pyStr(name)}' already exists in directory '${pyStr(this.dir(dir).name)}'.`)
    this.put(dir, name, this.alloc({ kind: "file", name, content }))
  }
  addDirectory(dir: Ref, name: Py, contents?: ReadonlyMap<string, readonly [Py, Ref]> | Ref): Ref {
    if (this.has(dir, name)) throw new PyError("ValueError", `Directory '${pyStr(name)}' already exists in directory '${pyStr(this.dir(dir).name)}'.`)
    const contentsRef = typeof contents === "number" ? contents : this.alloc({ kind: "contents", entries: contents ?? new Map() })
    const ref = this.alloc({ kind: "dir", name, parent: dir, contents: contentsRef })
    this.put(dir, name, ref)
    return ref
  }
  content(file: Ref): Py {
    return (this.get(file) as FileNode).content
  }
}

const draftOf = (s: FileSystemState) => new Draft(s, s.cwd, s.next)

/** A command over a draft; an exception keeps what was done before it, as Python's objects do. */
const fsMethod = (params: ReadonlyArray<Param>, f: (d: Draft, s: FileSystemState, ...args: Array<Py>) => Py): Method<FileSystemState> => ({
  params,
  run: (state, args): Outcome<FileSystemState> => {
    const d = draftOf(state)
    try {
      const output = f(d, state, ...args)
      return { output, state: d.state() }
    } catch (e) {
      if (e instanceof PyError) return { error: e, state: d.state() }
      throw e
    }
  }
})

// ---------------------------------------------------------------------------------------------
// The tree as Python values (for the state dump and for `root == cwd`)

interface FileValue extends PyObject {
  readonly pyClass: "File"
  readonly name: Py
  readonly content: Py
}
interface DirValue extends PyObject {
  readonly pyClass: "Directory"
  readonly name: Py
  readonly contents: PyDict
}

const valueOf = (d: Draft, ref: Ref): FileValue | DirValue => {
  const node = d.get(ref)
  if (node.kind === "file") return { pyClass: "File", name: node.name, content: node.content }
  const dir = node as DirNode
  return { pyClass: "Directory", name: dir.name, contents: PyDict.of(Array.from(d.entries(ref).values(), ([k, r]) => [k, valueOf(d, r)] as const)) }
}

registerCanon("File", (v, dump) => {
  const f = v as FileValue
  return `{"__file__":{"name":${dump(f.name)},"content":${dump(f.content)}}}`
})
registerCanon("Directory", (v, dump) => {
  const f = v as DirValue
  return `{"__dir__":{"name":${dump(f.name)},"contents":${dump(f.contents)}}}`
})

// ---------------------------------------------------------------------------------------------

const invalidChars = Array.from('|/\\?%*:"><')

/** `_validate_file_or_directory_name`. */
const validName = (name: Py): boolean => !invalidChars.some((c) => pyIn(c, name))

/** `_navigate_to_directory`: the directory, or upstream's error dict. */
const navigate = (d: Draft, s: FileSystemState, path: Py): Ref | PyDict => {
  if (path === null || pyEq(path, ".")) return d.cwd
  if (pyEq(path, "/")) return s.root
  const p = asStr(path, "strip")
  const names = p.replace(/^\/+|\/+$/g, "").split("/")
  let dir = p.startsWith("/") ? s.root : d.cwd
  for (const name of names) {
    const next = d.item(dir, name)
    if (!d.isDir(next)) return dict({ error: `cd: '${p}': No such file or directory` })
    dir = next
  }
  return dir
}

/** Python's `str.splitlines()`. */
const splitlines = (s: string): Array<string> => {
  const lines = s.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/)
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  return lines
}

const pySplitWords = (s: string): Array<string> => s.split(/[\s\x1c-\x1f\x85]+/u).filter((w) => w !== "")

const encoder = new TextEncoder()
const utf8Length = (s: string): number => encoder.encode(s).length

const fileContent = (d: Draft, ref: Ref, method: string): string => asStr(d.content(ref), method)

const fixed2 = (x: number): string => formatFixed(x, 2)

const load = (config: PyDict, longContext: LongContext | undefined): FileSystemState => {
  const heap = new Map<Ref, Node>()
  let next = 0
  const alloc = (node: Node): Ref => {
    heap.set(next, node)
    return next++
  }
  const tail = longContext?.get("FILES_TAIL_USED") ?? []
  const extension = longContext?.get("FILE_CONTENT_EXTENSION") ?? ""
  const populate = longContext?.get("POPULATE_FILE_EXTENSION") ?? []
  const item = (v: Py, k: Py): Py => {
    if (v instanceof PyDict) return v.item(k)
    throw typeError(`'${typeName(v)}' object is not subscriptable`)
  }
  const loadDir = (current: Py, dirRef: Ref, contentsRef: Ref): void => {
    const entries = new Map<string, readonly [Py, Ref]>()
    let bottommost = true
    if (!(current instanceof PyDict)) throw noAttribute(current, "items")
    for (const [name, data] of current.entries()) {
      const type = item(data, "type")
      if (pyEq(type, "directory")) {
        bottommost = false
        const cRef = alloc({ kind: "contents", entries: new Map() })
        const ref = alloc({ kind: "dir", name, parent: dirRef, contents: cRef })
        loadDir(item(data, "contents"), ref, cRef)
        entries.set(keyOf(name), [name, ref])
      } else if (pyEq(type, "file")) {
        let content = item(data, "content")
        if (longContext !== undefined && !pyIn(name, tail)) content = asStr(content, "__add__") + asStr(extension, "__add__")
        entries.set(keyOf(name), [entries.get(keyOf(name))?.[0] ?? name, alloc({ kind: "file", name, content })])
      }
    }
    if (bottommost && longContext !== undefined) {
      for (const name of pyIter(populate)) {
        if (entries.has(keyOf(name))) throw new PyError("ValueError", `File '${pyStr(name)}' already exists in directory.`)
        entries.set(keyOf(name), [name, alloc({ kind: "file", name, content: "" })])
      }
    }
    heap.set(contentsRef, { kind: "contents", entries })
  }
  const rootConfig = config.get("root")
  let root: Ref
  if (rootConfig instanceof PyDict && rootConfig.size > 0) {
    const name = rootConfig.keys()[0] as Py
    const cRef = alloc({ kind: "contents", entries: new Map() })
    root = alloc({ kind: "dir", name, parent: null, contents: cRef })
    loadDir(item(rootConfig.item(name), "contents"), root, cRef)
  } else {
    const cRef = alloc({ kind: "contents", entries: new Map() })
    root = alloc({ kind: "dir", name: "/", parent: null, contents: cRef })
  }
  return { long_context: longContext !== undefined, heap, root, cwd: root, next }
}

const canonOf = (d: Draft, ref: Ref): string => JSON.stringify(valueOf(d, ref), (_, v) => (v instanceof PyDict ? v.entries() : v))

export const GorillaFileSystem: Api<FileSystemState> = {
  name: "GorillaFileSystem",
  load,
  publicState: (s) => [
    ["long_context", s.long_context],
    ["root", valueOf(draftOf(s), s.root)]
  ],
  methods: {
    pwd: fsMethod([], (d) => {
      const path: Array<Py> = []
      let dir: Ref | null = d.cwd
      while (dir !== null) {
        path.push(d.dir(dir).name)
        dir = d.dir(dir).parent
      }
      const bad = path.reverse().findIndex((p) => typeof p !== "string")
      if (bad >= 0) throw typeError(`sequence item ${bad}: expected str instance, ${typeName(path[bad] as Py)} found`)
      return dict({ current_working_directory: "/" + path.join("/") })
    }),
    ls: fsMethod([["a", false]], (d, _, a) => {
      let contents = Array.from(d.entries(d.cwd).values(), ([k]) => k)
      if (!truthy(a as Py)) contents = contents.filter((k) => !asStr(k, "startswith").startsWith("."))
      return dict({ current_directory_content: contents })
    }),
    cd: fsMethod(["folder"], (d, s, folderArg) => {
      let folder = asStr(folderArg, "rstrip").replace(/\/+$/, "")
      if (folder === "") folder = "/"
      if (![".", "..", "/"].includes(folder) && folder.includes("/")) {
        return dict({ error: `cd: ${folder}: Unsupported path. Only one folder level at a time is supported.` })
      }
      if (folder === "..") {
        const parent = d.dir(d.cwd).parent
        if (parent !== null) d.cwd = parent
        else if (canonOf(d, s.root) === canonOf(d, d.cwd)) return dict({ error: "Current directory is already the root. Cannot go back." })
        else return dict({ error: "cd: ..: No such directory" })
        return PyDict.empty
      }
      const target = navigate(d, s, folder)
      if (target instanceof PyDict) return target
      d.cwd = target
      return dict({ current_working_directory: d.dir(target).name })
    }),
    mkdir: fsMethod(["dir_name"], (d, _, name) => {
      if (!validName(name)) return dict({ error: `mkdir: cannot create directory '${pyStr(name)}': Invalid character` })
      if (d.has(d.cwd, name)) return dict({ error: `mkdir: cannot create directory '${pyStr(name)}': File exists` })
      d.addDirectory(d.cwd, name)
      return null
    }),
    touch: fsMethod(["file_name"], (d, _, name) => {
      if (!validName(name)) return dict({ error: `touch: cannot touch '${pyStr(name)}': Invalid character` })
      if (d.has(d.cwd, name)) return dict({ error: `touch: cannot touch '${pyStr(name)}': File exists` })
      d.addFile(d.cwd, name, "")
      return null
    }),
    echo: fsMethod(["content", ["file_name", null]], (d, _, content, name) => {
      if (name === null) return dict({ terminal_output: content as Py })
      if (!validName(name as Py)) return dict({ error: `echo: cannot write to '${pyStr(name as Py)}': Invalid character` })
      if (!truthy(name as Py)) return dict({ terminal_output: content as Py })
      if (!d.has(d.cwd, name as Py)) return dict({ error: `echo: cannot write to '${pyStr(name as Py)}': No such file` })
      const ref = d.item(d.cwd, name as Py) as Ref
      const node = d.get(ref)
      if (node.kind !== "file") throw new PyError("AttributeError", "'Directory' object has no attribute '_write'")
      d.set(ref, { ...node, content: content as Py })
      return null
    }),
    cat: fsMethod(["file_name"], (d, _, name) => {
      if (!validName(name)) return dict({ error: `cat: '${pyStr(name)}': Invalid character` })
      if (!d.has(d.cwd, name)) return dict({ error: `cat: '${pyStr(name)}': No such file or directory` })
      const ref = d.item(d.cwd, name)
      if (d.isFile(ref)) return dict({ file_content: d.content(ref) })
      return dict({ error: `cat: '${pyStr(name)}': Is a directory` })
    }),
    find: fsMethod([["path", "."], ["name", null]], (d, s, path, name) => {
      const target = navigate(d, s, path as Py)
      if (target instanceof PyDict) {
        const msg = target.get("error")
        if (typeof msg === "string" && msg.startsWith("cd:")) return dict({ error: msg.replace("cd:", "find:") })
        return target
      }
      const matches: Array<Py> = []
      const search = (dir: Ref, base: string): void => {
        for (const [itemName, ref] of d.entries(dir).values()) {
          const itemPath = `${base}/${pyStr(itemName)}`
          if (name === null || pyIn(name as Py, itemName)) matches.push(itemPath)
          if (d.isDir(ref)) search(ref, itemPath)
        }
      }
      search(target, asStr(path as Py, "rstrip").replace(/\/+$/, ""))
      return dict({ matches })
    }),
    wc: fsMethod(["file_name", ["mode", "l"]], (d, _, name, mode) => {
      if (!pyIn(mode as Py, ["l", "w", "c"])) return dict({ error: `wc: invalid mode '${pyStr(mode as Py)}'` })
      if (d.has(d.cwd, name)) {
        const ref = d.item(d.cwd, name)
        if (d.isFile(ref)) {
          if (pyEq(mode as Py, "l")) return dict({ count: splitlines(fileContent(d, ref, "splitlines")).length, type: "lines" })
          if (pyEq(mode as Py, "w")) return dict({ count: pySplitWords(fileContent(d, ref, "split")).length, type: "words" })
          return dict({ count: pyLen(d.content(ref)), type: "characters" })
        }
      }
      return dict({ error: `wc: ${pyStr(name)}: No such file or directory` })
    }),
    sort: fsMethod(["file_name"], (d, _, name) => {
      if (d.has(d.cwd, name)) {
        const ref = d.item(d.cwd, name)
        if (d.isFile(ref)) {
          const lines = splitlines(fileContent(d, ref, "splitlines")).sort((a, b) => (pyCompare("<", a, b) ? -1 : pyCompare("<", b, a) ? 1 : 0))
          return dict({ sorted_content: lines.join("\n") })
        }
      }
      return dict({ error: `sort: ${pyStr(name)}: No such file or directory` })
    }),
    grep: fsMethod(["file_name", "pattern"], (d, _, name, pattern) => {
      if (d.has(d.cwd, name)) {
        const ref = d.item(d.cwd, name)
        if (d.isFile(ref)) return dict({ matching_lines: splitlines(fileContent(d, ref, "splitlines")).filter((line) => pyIn(pattern, line)) })
      }
      return dict({ error: `grep: ${pyStr(name)}: No such file or directory` })
    }),
    du: fsMethod([["human_readable", false]], (d, _, human) => {
      const size = (ref: Ref): number => {
        const node = d.get(ref)
        if (node.kind === "file") return utf8Length(asStr(node.content, "encode"))
        let total = 0
        for (const [, r] of d.entries(ref).values()) total += size(r)
        return total
      }
      let total = size(d.cwd)
      if (!truthy(human as Py)) return dict({ disk_usage: `${total} bytes` })
      for (const unit of ["B", "KB", "MB", "GB", "TB"]) {
        if (total < 1024) return dict({ disk_usage: `${fixed2(total)} ${unit}` })
        total /= 1024
      }
      return dict({ disk_usage: `${fixed2(total)} PB` })
    }),
    tail: fsMethod(["file_name", ["lines", 10]], (d, _, name, linesArg) => {
      if (d.has(d.cwd, name)) {
        const ref = d.item(d.cwd, name)
        if (d.isFile(ref)) {
          const content = splitlines(fileContent(d, ref, "splitlines"))
          let lines = linesArg as Py
          if (pyCompare(">", lines, content.length)) lines = content.length
          if (typeof lines !== "number" && typeof lines !== "boolean") throw typeError("bad operand type for unary -: '" + typeName(lines) + "'")
          let start = -Number(lines)
          if (start < 0) start = Math.max(0, start + content.length)
          return dict({ last_lines: content.slice(Math.min(start, content.length)).join("\n") })
        }
      }
      return dict({ error: `tail: ${pyStr(name)}: No such file or directory` })
    }),
    diff: fsMethod(["file_name1", "file_name2"], (d, _, a, b) => {
      if (d.has(d.cwd, a) && d.has(d.cwd, b)) {
        const fa = d.item(d.cwd, a)
        const fb = d.item(d.cwd, b)
        if (d.isFile(fa) && d.isFile(fb)) {
          const la = splitlines(fileContent(d, fa, "splitlines"))
          const lb = splitlines(fileContent(d, fb, "splitlines"))
          const out: Array<string> = []
          for (let i = 0; i < Math.min(la.length, lb.length); i++) if (la[i] !== lb[i]) out.push(`- ${la[i]}\n+ ${lb[i]}`)
          return dict({ diff_lines: out.join("\n") })
        }
      }
      return dict({ error: `diff: ${pyStr(a)} or ${pyStr(b)}: No such file or directory` })
    }),
    mv: fsMethod(["source", "destination"], (d, _, source, destination) => {
      if (!d.has(d.cwd, source)) return dict({ error: `mv: cannot move '${pyStr(source)}': No such file or directory` })
      const ref = d.item(d.cwd, source) as Ref
      if (pyIn("/", destination)) return dict({ error: "mv: path not allowed in destination. Provide only a file or directory name." })
      const node = d.get(ref)
      if (d.has(d.cwd, destination)) {
        const dest = d.item(d.cwd, destination) as Ref
        if (!d.isDir(dest)) return dict({ error: `mv: cannot move '${pyStr(source)}' to '${pyStr(destination)}': Not a directory` })
        if (d.has(dest, pyStr(source))) return dict({ error: `mv: cannot move '${pyStr(source)}' to '${pyStr(destination)}/${pyStr(source)}': File exists` })
        d.pop(d.cwd, source)
        if (node.kind === "file") d.addFile(dest, source, node.content)
        else d.addDirectory(dest, source, (node as DirNode).contents)
        return dict({ result: `'${pyStr(source)}' moved to '${pyStr(destination)}/${pyStr(source)}'` })
      }
      d.pop(d.cwd, source)
      if (node.kind === "file") d.addFile(d.cwd, destination, node.content)
      else d.addDirectory(d.cwd, destination, (node as DirNode).contents)
      return dict({ result: `'${pyStr(source)}' moved to '${pyStr(destination)}'` })
    }),
    rm: fsMethod(["file_name"], (d, _, name) => {
      if (!d.has(d.cwd, name)) return dict({ error: `rm: cannot remove '${pyStr(name)}': No such file or directory` })
      d.pop(d.cwd, name)
      return dict({ result: `'${pyStr(name)}' removed` })
    }),
    rmdir: fsMethod(["dir_name"], (d, _, name) => {
      if (!d.has(d.cwd, name)) return dict({ error: `rmdir: cannot remove '${pyStr(name)}': No such file or directory` })
      const ref = d.item(d.cwd, name)
      if (!d.isDir(ref)) return dict({ error: `rmdir: cannot remove '${pyStr(name)}': Not a directory` })
      if (d.entries(ref).size > 0) return dict({ error: `rmdir: cannot remove '${pyStr(name)}': Directory not empty` })
      d.pop(d.cwd, name)
      return dict({ result: `'${pyStr(name)}' removed` })
    }),
    cp: fsMethod(["source", "destination"], (d, _, source, destination) => {
      if (!d.has(d.cwd, source)) return dict({ error: `cp: cannot copy '${pyStr(source)}': No such file or directory` })
      const ref = d.item(d.cwd, source) as Ref
      if (pyIn("/", destination)) return dict({ error: "cp: path not allowed in destination. Provide only a file or directory name." })
      const node = d.get(ref)
      if (d.has(d.cwd, destination)) {
        const dest = d.item(d.cwd, destination) as Ref
        if (!d.isDir(dest)) return dict({ error: `cp: cannot copy '${pyStr(source)}' to '${pyStr(destination)}': Not a directory` })
        if (d.has(dest, `${pyStr(destination)}/${pyStr(source)}`)) {
          return dict({ error: `cp: cannot copy '${pyStr(source)}' to '${pyStr(destination)}/${pyStr(source)}': File exists` })
        }
        if (node.kind === "file") d.addFile(dest, source, node.content)
        else d.addDirectory(dest, source, new Map(d.entries(ref)))
        return dict({ result: `'${pyStr(source)}' copied to '${pyStr(destination)}/${pyStr(source)}'` })
      }
      if (node.kind === "file") d.addFile(d.cwd, destination, node.content)
      else d.addDirectory(d.cwd, destination, new Map(d.entries(ref)))
      return dict({ result: `'${pyStr(source)}' copied to '${pyStr(destination)}'` })
    })
  }
}


