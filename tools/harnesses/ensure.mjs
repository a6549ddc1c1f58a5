// Before the tests: install the pinned agent CLIs the harness tests run, once, from the lock file.
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
if (!existsSync(join(here, "node_modules", ".package-lock.json"))) {
  process.stderr.write("assay: installing the agent CLIs for the harness tests (npm install --prefix tools/harnesses)\n")
  // npm install, not npm ci: one CLI lists optional per-platform packages the registry lacks,
  // which npm ci refuses; the lock file still pins every version.
  execFileSync("npm", ["install", "--prefix", here, "--no-audit", "--no-fund"], { stdio: "inherit" })
}
