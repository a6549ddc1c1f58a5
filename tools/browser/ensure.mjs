// Before the tests: Debian's chromium for the HTML report test (test/experiment/ReportBrowser.test.ts
// runs $CHROMIUM, default /usr/bin/chromium). Installed here when it is missing and we may
// (root on Debian); otherwise the run stops with one line saying what is missing and how to get it:
// a browser test that skips itself would look like a pass.
import { execFileSync } from "node:child_process"
import { accessSync, constants, existsSync } from "node:fs"

const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium"

const runnable = (file) => {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false // missing or not executable: both mean "not there" to the test
  }
}

const fail = (line) => {
  process.stderr.write(`assay: ${line}\n`)
  process.exit(1)
}

if (!runnable(chromium)) {
  if (process.env.CHROMIUM !== undefined) {
    fail(`CHROMIUM=${chromium} is not an executable: point CHROMIUM at a Chromium binary, or unset it to use Debian's /usr/bin/chromium`)
  }
  const root = process.getuid?.() === 0
  const debian = process.platform === "linux" && existsSync("/etc/debian_version")
  if (!root || !debian) {
    fail(
      `the HTML report test needs chromium at ${chromium}, which is missing: ` +
        (debian ? "sudo apt-get update && sudo apt-get install -y chromium" : "install Chromium and set CHROMIUM=/path/to/chromium") +
        ", then run the tests again"
    )
  }
  process.stderr.write("assay: installing Debian's chromium for the HTML report test: apt-get update -qq && apt-get install -y -qq chromium\n")
  // Quiet, but apt's errors still reach stderr; a lock held by another apt waits rather than fails.
  const apt = (args) =>
    execFileSync("apt-get", ["-o", "DPkg::Lock::Timeout=300", ...args], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
    })
  try {
    apt(["update", "-qq"])
    apt(["install", "-y", "-qq", "chromium"])
  } catch (e) {
    fail(`installing chromium failed (${e instanceof Error ? e.message.split("\n")[0] : String(e)}): apt-get update && apt-get install -y chromium`)
  }
  if (!runnable(chromium)) fail(`apt-get installed chromium, but ${chromium} is still missing`)
}
