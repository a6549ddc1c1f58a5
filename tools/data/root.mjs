// The data folder the tests read, chosen in one place for the test setup (tools/data/ensure.mjs,
// which fills it) and the test configuration (vitest.config.ts, which gives it to the tests as
// ASSAY_DATA_DIR): ASSAY_DATA_DIR when set; else `../shared/data` beside the checkout when it
// exists (a shared copy kept beside a working tree); else the user's default data folder, the one
// `assay` itself uses (src/evaluation/DataRoot.ts `defaultDataRoot`, restated here in JavaScript
// so that neither caller needs TypeScript loaded; test/cli/freshClone.test.ts checks they agree).
import { existsSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, isAbsolute, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

/** The checkout this file is in. */
export const checkout = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..")

const nonEmpty = (s) => (s === undefined || s === "" ? undefined : s)

/** `$XDG_CACHE_HOME/assay/NAME` (`~/.cache/assay/NAME` when XDG_CACHE_HOME is not set or not absolute), as DataRoot's `userCacheFolder`. */
export const userCacheFolder = (name, env = process.env) => {
  const xdg = nonEmpty(env.XDG_CACHE_HOME)
  const cache = xdg !== undefined && isAbsolute(xdg) ? xdg : join(nonEmpty(env.HOME) ?? homedir(), ".cache")
  return resolve(cache, "assay", name)
}

/** The folder the tests read benchmark data from, absolute, and why it is that one. */
export const testDataFolder = (env = process.env, root = checkout) => {
  const set = nonEmpty(env.ASSAY_DATA_DIR)
  if (set !== undefined) return { dir: resolve(set), why: "ASSAY_DATA_DIR" }
  const shared = resolve(root, "..", "shared", "data")
  if (existsSync(shared)) return { dir: shared, why: "the shared copy beside the checkout" }
  return { dir: userCacheFolder("data", env), why: "the default data folder; ASSAY_DATA_DIR is not set" }
}
