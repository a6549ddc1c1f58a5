// Before the container tests (providers/harbor, src/container): Debian's podman, runc and mmdebstrap,
// installed here when missing and we may (root on Debian), then the small local base image the test
// tasks' Dockerfiles start FROM, built once with mmdebstrap and `podman import` (no registry is
// reachable on the machines CI runs on). The image's tag is a key of what it is built from
// (base.mjs: suite, variant, packages), so a changed package list builds a new one and an unchanged
// one is found and reused. Prints the tag on stdout.
//
// ASSAY_CONTAINERS=skip skips this step (a machine where containers cannot run: the container
// tests then skip themselves, saying why).
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { aptInstall, fail } from "../debian.mjs"
import { BASE, baseTag } from "./base.mjs"

if (process.env.ASSAY_CONTAINERS === "skip") {
  process.stderr.write("assay: ASSAY_CONTAINERS=skip: no container engine or base image checked\n")
  process.exit(0)
}

const tag = baseTag

const tools = [
  { pkg: "podman", bin: "/usr/bin/podman", purpose: "the container engine of Harbor-format tasks" },
  { pkg: "runc", bin: "/usr/sbin/runc", purpose: "the runtime podman uses here (crun refuses hybrid cgroups)" },
  { pkg: "mmdebstrap", bin: "/usr/bin/mmdebstrap", purpose: "building the local Debian base image (no registry is reachable)" }
]
for (const tool of tools) {
  if (existsSync(tool.bin)) continue
  aptInstall({
    pkg: tool.pkg,
    purpose: tool.purpose,
    need: `the container tests need ${tool.pkg} (${tool.bin}), which is missing`,
    elsewhere: `install ${tool.pkg} with your system's package manager`,
    // podman's recommended packages bring its networking (netavark/CNI) and catatonit.
    flags: tool.pkg === "podman" ? [] : ["--no-install-recommends"]
  })
  if (!existsSync(tool.bin)) fail(`apt-get installed ${tool.pkg}, but there is no ${tool.bin}`)
}

// The flags podman needs on these machines (crun and the default ulimits are refused).
const podman = ["--runtime", "runc", "--cgroup-manager=cgroupfs"]
const run = (args, options = {}) => execFileSync("podman", [...podman, ...args], { stdio: ["ignore", "pipe", "pipe"], ...options })

const present = spawnSync("podman", [...podman, "image", "exists", tag]).status === 0
if (!present) {
  const started = Date.now()
  process.stderr.write(`assay: building the base image ${tag} (mmdebstrap ${BASE.variant} ${BASE.suite} + ${BASE.packages.join(",")})\n`)
  const dir = mkdtempSync(join(tmpdir(), "assay-base-"))
  try {
    const rootfs = join(dir, "rootfs.tar")
    const built = spawnSync("mmdebstrap", ["--quiet", `--variant=${BASE.variant}`, `--include=${BASE.packages.join(",")}`, BASE.suite, rootfs], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    if (built.status !== 0) {
      const last = String(built.stderr).trim().split("\n").slice(-3).join(" | ")
      fail(`mmdebstrap could not build the base image (${last}): is Debian's mirror reachable?`)
    }
    // --change sets what a Dockerfile FROM it inherits: a shell and PATH as in Debian's images.
    run(["import", "--change", "CMD [\"/bin/bash\"]", "--change", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", rootfs, tag])
  } catch (e) {
    const stderr = e && typeof e === "object" && "stderr" in e && e.stderr ? String(e.stderr).trim().split("\n").slice(-1)[0] : String(e)
    fail(`podman import of the base image failed: ${stderr}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  process.stderr.write(`assay: built ${tag} in ${Math.round((Date.now() - started) / 1000)} s\n`)
}

// Once, as the tests will: a container of the image runs a command (runtime, cgroups, ulimits).
try {
  run(["run", "--rm", "--network=none", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024", tag, "python3", "-c", "import pytest"])
} catch (e) {
  const stderr = e && typeof e === "object" && "stderr" in e && e.stderr ? String(e.stderr).trim().split("\n").slice(-1)[0] : String(e)
  fail(`podman cannot run a container of ${tag} here (${stderr}); see /work/shared/containers.md`)
}
process.stdout.write(`${tag}\n`)
