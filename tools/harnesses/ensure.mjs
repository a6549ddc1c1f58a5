// Before the tests: install the pinned agent CLIs the harness tests run, from the lock file, when
// any of them is missing or at another version (a checkout installed before a CLI was added). By
// hand, `assay harnesses install [NAME...]` installs only the ones named.
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const wanted = JSON.parse(readFileSync(join(here, "package.json"), "utf8")).dependencies ?? {}
const installedVersion = (name) => {
  try {
    return JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version
  } catch {
    return undefined // not installed
  }
}
const missing = Object.entries(wanted).filter(([name, version]) => installedVersion(name) !== version).map(([name]) => name)
if (missing.length > 0) {
  process.stderr.write(`assay: installing the agent CLIs for the harness tests (${missing.join(", ")}): npm install --prefix tools/harnesses\n`)
  // npm install, not npm ci: one CLI lists optional per-platform packages the registry lacks,
  // which npm ci refuses; the lock file still pins every version.
  execFileSync("npm", ["install", "--prefix", here, "--no-audit", "--no-fund"], { stdio: "inherit" })
}
