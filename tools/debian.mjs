// What the ensure scripts share: one line and exit 1 when something the tests need is missing, or
// Debian's package installed when we may (root on Debian). A test that skipped itself for want of
// it would look like a pass.
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"

export const fail = (line) => {
  process.stderr.write(`assay: ${line}\n`)
  process.exit(1)
}

/**
 * Installs Debian's `pkg` for `purpose` (what needs it), or stops with one line: `need` says what
 * is missing, `elsewhere` how to get it off Debian. Returns once apt-get has installed it.
 */
export const aptInstall = ({ pkg, purpose, need, elsewhere, flags = [] }) => {
  const debian = process.platform === "linux" && existsSync("/etc/debian_version")
  if (process.getuid?.() !== 0 || !debian) {
    fail(`${need}: ${debian ? `sudo apt-get update && sudo apt-get install -y ${pkg}` : elsewhere}, then run the tests again`)
  }
  process.stderr.write(`assay: installing Debian's ${pkg} for ${purpose}: apt-get update -qq && apt-get install -y -qq ${pkg}\n`)
  // Quiet, but apt's errors still reach stderr; a lock held by another apt waits rather than fails.
  const apt = (args) =>
    execFileSync("apt-get", ["-o", "DPkg::Lock::Timeout=300", ...args], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
    })
  try {
    apt(["update", "-qq"])
    apt(["install", "-y", "-qq", ...flags, pkg])
  } catch (e) {
    fail(`installing ${pkg} failed (${e instanceof Error ? e.message.split("\n")[0] : String(e)}): apt-get update && apt-get install -y ${pkg}`)
  }
}
