/**
 * The import graph of the project's own modules (relative imports of .ts files), read from the
 * sources: what the house test checks for circles and for src/ reaching into providers/.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

const specifiers = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^"'`;]*?\sfrom\s+)?["'](\.{1,2}\/[^"']+)["']|import\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g

const filesUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === "node_modules" || name.startsWith(".")) return []
    return statSync(path).isDirectory() ? filesUnder(path) : /\.m?ts$/.test(name) ? [path] : []
  })

/** Each module (path relative to `root`) and the project modules it imports. */
export const importGraph = (root: string, folders: ReadonlyArray<string>): ReadonlyMap<string, ReadonlyArray<string>> => {
  const graph = new Map<string, ReadonlyArray<string>>()
  for (const file of folders.flatMap((f) => filesUnder(join(root, f)))) {
    const text = readFileSync(file, "utf8")
    const targets = new Set<string>()
    for (const m of text.matchAll(specifiers)) {
      const spec = m[1] ?? m[2]
      if (spec === undefined || !/\.m?ts$/.test(spec)) continue
      targets.add(relative(root, resolve(dirname(file), spec)))
    }
    graph.set(relative(root, file), [...targets])
  }
  return graph
}

/** The strongly connected components of more than one module (or a module importing itself): the circles. */
export const circles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): ReadonlyArray<ReadonlyArray<string>> => {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<ReadonlyArray<string>> = []
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const component: Array<string> = []
      for (;;) {
        const w = stack.pop()!
        onStack.delete(w)
        component.push(w)
        if (w === v) break
      }
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort())
    }
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}
