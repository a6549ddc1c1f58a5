// Before the tests: Debian's postgresql for the Postgres store and cluster tests
// (test/support/postgres.ts starts a server of each test file's own from /usr/lib/postgresql/*/bin,
// or $PG_BIN). Installed here when it is missing and we may (root on Debian); otherwise the run
// stops with one line saying what is missing and how to get it.
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { aptInstall, fail } from "../debian.mjs"

const root = "/usr/lib/postgresql"
const found = () =>
  process.env.PG_BIN !== undefined
    ? existsSync(join(process.env.PG_BIN, "initdb"))
    : existsSync(root) && readdirSync(root).some((v) => existsSync(join(root, v, "bin", "initdb")))

if (!found()) {
  if (process.env.PG_BIN !== undefined) fail(`PG_BIN=${process.env.PG_BIN} has no initdb: point PG_BIN at Postgres's bin folder, or unset it to use Debian's`)
  aptInstall({
    pkg: "postgresql",
    purpose: "the store tests",
    need: "the Postgres store tests need Postgres's server binaries (initdb, postgres), which are missing",
    elsewhere: "install Postgres and set PG_BIN to its bin folder",
    // The server binaries only: the tests start their own servers, so no cluster is wanted.
    flags: ["--no-install-recommends"]
  })
  if (!found()) fail(`apt-get installed postgresql, but no initdb is under ${root}/*/bin`)
}
