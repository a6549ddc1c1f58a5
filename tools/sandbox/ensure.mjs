// Before the tests: Debian's bubblewrap, the sandbox every untrusted process runs in
// (src/sandbox/Sandbox.ts: coding-repair's commands and hidden tests, the harness graders). Installed
// here when it is missing and we may (root on Debian); otherwise the run stops with one line saying
// what is missing and how to get it. Then bwrap is tried once with the namespaces assay asks for:
// installed but unable to create them (user namespaces disabled) fails here, not in a test.
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { aptInstall, fail } from "../debian.mjs"

const bwrap = process.env.ASSAY_BWRAP || "/usr/bin/bwrap"
const found = () => existsSync(bwrap)

if (!found()) {
  if (process.env.ASSAY_BWRAP) fail(`ASSAY_BWRAP=${process.env.ASSAY_BWRAP} does not exist: point it at bwrap, or unset it to use Debian's`)
  aptInstall({
    pkg: "bubblewrap",
    purpose: "the sandbox of candidates' code",
    need: "the sandbox tests and coding-repair need bubblewrap (bwrap), which is missing",
    elsewhere: "install bubblewrap with your system's package manager (or set ASSAY_BWRAP to its bwrap)",
    flags: ["--no-install-recommends"]
  })
  if (!found()) fail(`apt-get installed bubblewrap, but there is no ${bwrap}`)
}

try {
  // As root, as the sandbox does: no user namespace; otherwise an unprivileged one.
  const userns = process.getuid?.() === 0 ? [] : ["--unshare-user"]
  execFileSync(bwrap, [...userns, "--unshare-pid", "--unshare-net", "--die-with-parent", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev", "/usr/bin/true"], {
    stdio: ["ignore", "ignore", "pipe"],
    env: {}
  })
} catch (e) {
  const stderr = e && typeof e === "object" && "stderr" in e && e.stderr ? String(e.stderr).trim().split("\n")[0] : String(e)
  fail(`${bwrap} cannot create its namespaces here (${stderr}): allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run as root`)
}
