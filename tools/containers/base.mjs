// The local Debian base image the container tests' task images start FROM (tools/containers/ensure.mjs
// builds it): what it is built from, and its tag, a key of that, so a changed package list is a new image.
import { createHash } from "node:crypto"

export const BASE = {
  suite: "bookworm",
  variant: "minbase",
  packages: ["python3", "python3-pytest", "git", "ca-certificates", "procps"]
}

export const baseTag = `localhost/assay-bookworm-py:${createHash("sha256").update(JSON.stringify(BASE)).digest("hex").slice(0, 12)}`
