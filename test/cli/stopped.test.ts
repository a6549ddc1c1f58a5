/**
 * The command a stopped run prints, and keeps in the run's settings for `report`: the process's own
 * command line, read back by a POSIX shell as typed, with a store URL's password hidden however the
 * flag was written.
 */
import { afterEach, describe, expect, it } from "vitest"
import { resumeCommand } from "../../src/cli/stopped.ts"

const argv = process.argv
afterEach(() => {
  process.argv = argv
})

describe("the resume command", () => {
  it("hides a store URL's password, as --store URL and as --store=URL, and quotes what a shell would split", () => {
    process.argv = [argv[0]!, "bin/assay.js", "run", "--store", "postgres://me:hunter2@db/assay", "--store=postgres://me:hunter2@db/assay", "--task", "a b", "--yes"]
    const line = resumeCommand()
    expect(line).not.toContain("hunter2")
    expect(line).toBe("assay run --store 'postgres://me:***@db/assay' '--store=postgres://me:***@db/assay' --task 'a b' --yes")
  })
})
