#!/usr/bin/env node
// Compiles the command's TypeScript into one ES module with esbuild (dependencies stay
// external and load natively), caches it by content, and runs it in this process, so a
// signal sent to this process reaches the command itself.
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "esbuild"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

// Each file keeps its own import.meta.url, so paths relative to a source file stay right.
const ownUrl = {
  name: "own-import-meta-url",
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, "utf8").replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href)),
      loader: "ts"
    }))
  }
}

const result = await build({
  entryPoints: [join(root, "src", "cli", "main.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  write: false,
  sourcemap: "inline",
  logLevel: "error",
  outfile: join(root, "node_modules", ".assay", "assay.mjs"),
  plugins: [ownUrl]
})
const code = result.outputFiles[0].contents
const dir = join(root, "node_modules", ".assay")
const file = join(dir, `assay-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`)
if (!existsSync(file)) {
  mkdirSync(dir, { recursive: true })
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, code)
  renameSync(tmp, file)
}
await import(pathToFileURL(file).href)
