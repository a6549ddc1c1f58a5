/**
 * A pinned file only some tasks need (bfcl-multi-turn's long_context.py): a pull that cannot
 * bring it says so, names what cannot run without it, and puts every other file in place.
 */
import { describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join, resolve } from "node:path"
import { Effect, Either } from "effect"
import { data as multiTurnData } from "../../providers/bfcl/multiturn/provider.ts"
import { pullData } from "../../src/cli/pull.ts"
import type { Provider } from "../../src/evaluation/Provider.ts"
import { tempDir } from "./support.ts"

const shared = resolve(process.env["ASSAY_DATA_DIR"] ?? "")
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

const users = (optionalUrl: string, requiredUrl: string): Provider =>
  ({
    name: "users-benchmark",
    data: [
      { path: "users/tasks.json", url: requiredUrl, sha256: sha256("tasks") },
      { path: "users/constants.py", url: optionalUrl, sha256: sha256("constants"), optional: "the 3 long tasks" }
    ]
  }) as unknown as Provider

/** A server answering /tasks.json and, when `withConstants`, /constants.py; everything else 404. */
const serve = async (withConstants: boolean) => {
  const server = createServer((req, res) => {
    if (req.url === "/tasks.json") res.writeHead(200).end("tasks")
    else if (req.url === "/constants.py" && withConstants) res.writeHead(200).end("constants")
    else res.writeHead(404).end()
  })
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok))
  const { port } = server.address() as AddressInfo
  return { base: `http://127.0.0.1:${port}`, close: () => new Promise<void>((ok) => server.close(() => ok())) }
}

const pull = (provider: Provider, target: string, from: string | null = null) => {
  const lines: Array<string> = []
  return Effect.runPromise(
    Effect.either(pullData(provider, { target, from, mirror: null, log: (l) => Effect.sync(() => lines.push(l)) }))
  ).then((result) => ({ result, lines }))
}

describe("an optional pinned file", () => {
  it("that cannot be downloaded is skipped with what needs it; the other files are pulled", async () => {
    const server = await serve(false)
    try {
      const target = join(tempDir("assay-optional-"), "data")
      const { result, lines } = await pull(users(`${server.base}/constants.py`, `${server.base}/tasks.json`), target)
      expect(Either.isRight(result)).toBe(true)
      expect(readFileSync(join(target, "users/tasks.json"), "utf8")).toBe("tasks")
      expect(existsSync(join(target, "users/constants.py"))).toBe(false)
      expect(lines.join("\n")).toMatch(/skipped users\/constants\.py: cannot download .*HTTP 404.*: the 3 long tasks cannot run without it/)
    } finally {
      await server.close()
    }
  })

  it("that can be downloaded is pulled and checked like any other", async () => {
    const server = await serve(true)
    try {
      const target = join(tempDir("assay-optional-"), "data")
      const { result } = await pull(users(`${server.base}/constants.py`, `${server.base}/tasks.json`), target)
      expect(Either.isRight(result)).toBe(true)
      expect(readFileSync(join(target, "users/constants.py"), "utf8")).toBe("constants")
    } finally {
      await server.close()
    }
  })

  it("a required file that cannot be downloaded still fails the pull, leaving nothing", async () => {
    const server = await serve(false)
    try {
      const target = join(tempDir("assay-optional-"), "data")
      const { result } = await pull(users(`${server.base}/constants.py`, `${server.base}/missing.json`), target)
      expect(Either.isLeft(result)).toBe(true)
      expect(existsSync(target)).toBe(false)
    } finally {
      await server.close()
    }
  })

  it("bfcl-multi-turn --from a folder without long_context.py: everything else is copied, the long-context tasks named", async () => {
    const longContext = multiTurnData.find((f) => f.path.endsWith("long_context.py"))
    expect(longContext?.optional).toContain("multi_turn_long_context")
    if (existsSync(join(shared, longContext!.path))) return // this data folder has it: nothing to skip
    const target = join(tempDir("assay-optional-"), "data")
    const { result, lines } = await pull({ name: "bfcl-multi-turn", data: multiTurnData } as unknown as Provider, target, shared)
    expect(Either.isRight(result)).toBe(true)
    expect(lines).toContain(`skipped ${longContext!.path}: not in ${shared}: ${longContext!.optional} cannot run without it`)
    for (const f of multiTurnData.filter((f) => f !== longContext)) expect(existsSync(join(target, f.path))).toBe(true)
  })
})
