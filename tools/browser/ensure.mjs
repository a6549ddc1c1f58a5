// Before the tests: Debian's chromium for the HTML report and viewer tests (they run $CHROMIUM,
// default /usr/bin/chromium). Installed here when it is missing and we may (root on Debian);
// otherwise the run stops with one line saying what is missing and how to get it.
import { accessSync, constants } from "node:fs"
import { aptInstall, fail } from "../debian.mjs"

const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium"

const runnable = (file) => {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false // missing or not executable: both mean "not there" to the test
  }
}

if (!runnable(chromium)) {
  if (process.env.CHROMIUM !== undefined) {
    fail(`CHROMIUM=${chromium} is not an executable: point CHROMIUM at a Chromium binary, or unset it to use Debian's /usr/bin/chromium`)
  }
  aptInstall({
    pkg: "chromium",
    purpose: "the HTML report test",
    need: `the HTML report test needs chromium at ${chromium}, which is missing`,
    elsewhere: "install Chromium and set CHROMIUM=/path/to/chromium"
  })
  if (!runnable(chromium)) fail(`apt-get installed chromium, but ${chromium} is still missing`)
}
