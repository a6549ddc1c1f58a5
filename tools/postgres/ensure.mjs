// Before the tests: Debian's postgresql for the Postgres store and cluster tests
// (test/support/postgres.ts starts a server of each test file's own from /usr/lib/postgresql/*/bin,
// or $PG_BIN). Installed here when it is missing and we may (root on Debian); otherwise the run
// stops with one line saying what is missing and how to get it: a Postgres test that skips itself
// would look like a pass.
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"

const root = "/usr/lib/postgresql"
const found = () =>
  process.env.PG_BIN !== undefined
    ? existsSync(join(process.env.PG_BIN, "initdb"))
    : existsSync(root) && readdirSync(root).some((v) => existsSync(join(root, v, "bin", "initdb")))

const fail = (line) => {
  process.stderr.write(`assay: ${line}\n`)
  process.exit(1)
}

if (!found()) {
  if (process.env.PG_BIN !== undefined) fail(`PG_BIN=${process.env.PG_BIN} has no initdb: point PG_BIN at Postgres's bin folder, or unset it to use Debian's`)
  const debian = process.platform === "linux" && existsSync("/etc/debian_version")
  if (process.getuid?.() !== 0 || !debian) {
    fail(
      "the Postgres store tests need Postgres's server binaries (initdb, postgres), which are missing: " +
        (debian ? "sudo apt-get update && sudo apt-get install -y postgresql" : "install Postgres and set PG_BIN to its bin folder") +
        ", then run the tests again"
    )
  }
  process.stderr.write("assay: installing Debian's postgresql for the store tests: apt-get update -qq && apt-get install -y -qq postgresql\n")
  const apt = (args) =>
    execFileSync("apt-get", ["-o", "DPkg::Lock::Timeout=300", ...args], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
    })
  try {
    apt(["update", "-qq"])
    // The server binaries only: the tests start their own servers, so no cluster is wanted.
    apt(["install", "-y", "-qq", "--no-install-recommends", "postgresql"])
  } catch (e) {
    fail(`installing postgresql failed (${e instanceof Error ? e.message.split("\n")[0] : String(e)}): apt-get update && apt-get install -y postgresql`)
  }
  if (!found()) fail(`apt-get installed postgresql, but no initdb is under ${root}/*/bin`)
}
