/**
 * What the container tests share: podman with the flags these machines need, and whether it can
 * run here at all (the one reason those tests skip, saying so). The base image the test tasks build
 * FROM is made by npm test's pretest (tools/containers/ensure.mjs), or here when the tests run alone.
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { baseTag } from "../../tools/containers/base.mjs"

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")
export const fixtures = path.join(repo, "test/harbor/fixtures")
export { baseTag }

/** The fixtures' FROM image, replaced by the local base image. */
export const images = { "python:3.13-slim-bookworm": baseTag }

const PODMAN = ["--runtime", "runc", "--cgroup-manager=cgroupfs"]
export const podman = (...args: ReadonlyArray<string>) => spawnSync("podman", [...PODMAN, ...args], { encoding: "utf8" })

/** The containers an assay process (by pid) labelled as its own, by id; none once its Attempts are over. */
export const containersOf = (pid: number): string => podman("ps", "-a", "-q", "--filter", `label=assay.pid=${pid}`).stdout.trim()

/** Why the container tests cannot run here, or null: podman missing or unable to build the base image. */
export const unable: string | null = (() => {
  const version = podman("version", "--format", "{{.Client.Version}}")
  if (version.error !== undefined || version.status !== 0) return `podman cannot run here (${version.error?.message ?? version.stderr.trim()})`
  if (podman("image", "exists", baseTag).status !== 0) {
    const ensure = spawnSync(process.execPath, [path.join(repo, "tools/containers/ensure.mjs")], { encoding: "utf8" })
    if (ensure.status !== 0) return `the base image could not be built (${ensure.stderr.trim().split("\n").pop() ?? ""})`
  }
  return null
})()
