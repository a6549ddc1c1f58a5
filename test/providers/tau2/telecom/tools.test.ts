import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as World from "../../../../src/world/World.ts"
import { loadTelecomData } from "../../../../providers/tau2/telecom/data.ts"
import { float } from "../../../../providers/tau2/common/pyjson.ts"
import { parsePyJson } from "../../../../providers/tau2/telecom/pyjsonParse.ts"
import { parseToml } from "../../../../providers/tau2/telecom/toml.ts"
import { call, callRaw, makeTelecomTools, runEnvFunction, type ToolOptions } from "../../../../providers/tau2/telecom/tools.ts"

const fresh = Effect.map(loadTelecomData(), (d) => d)

describe("telecom tools", () => {
  it.effect("offers the agent 13 tools and the user 30 phone tools, in upstream order", () =>
    Effect.gen(function* () {
      const data = yield* fresh
      const agent = makeTelecomTools("assistant", data.toolSpecs, data.toolTypes)
      const user = makeTelecomTools("user", data.userToolSpecs, data.userToolTypes)
      expect(agent).toHaveLength(13)
      expect(user).toHaveLength(30)
      expect(agent.find((t) => t.spec.name === "refuel_data")?.access).toBe("write")
      expect(user.find((t) => t.spec.name === "check_status_bar")?.access).toBe("read")
    }))

  it.effect("each side sees only its own tools", () =>
    Effect.gen(function* () {
      const data = yield* fresh
      const out = call(data.initialWorld, "toggle_data", "assistant", {})
      expect(out).toMatchObject({ output: "Error: Tool 'toggle_data' not found.", error: true, writes: [] })
    }))

  it.effect("prints a float argument as Python does: 2.0 and 2 differ in the text and in the DB", () =>
    Effect.gen(function* () {
      const data = yield* fresh
      const args = { customer_id: "C1001", line_id: "L1002" }
      const asFloat = call(data.initialWorld, "refuel_data", "assistant", { ...args, gb_amount: float(2) })
      const asInt = call(data.initialWorld, "refuel_data", "assistant", { ...args, gb_amount: 2 })
      expect(asFloat.output).toContain("Successfully added 2.0 GB")
      expect(asInt.output).toContain("Successfully added 2 GB")
      expect(World.digest(asFloat.world)).not.toBe(World.digest(asInt.world))
    }))

  it.effect("new draft bills take their ids from the injected generator", () =>
    Effect.gen(function* () {
      const data = yield* fresh
      const options: ToolOptions = { newBillId: (n) => `BTEST${n}` }
      // A customer with a line and no draft bill: refuelling creates the draft.
      const status = (id: string) => (World.get(data.initialWorld, "bills", id) as { status: string }).status
      const [id, c] = World.entries(data.initialWorld, "customers")
        .map(([k, v]) => [k, v as { line_ids: ReadonlyArray<string>; bill_ids: ReadonlyArray<string> }] as const)
        .find(([, v]) => v.line_ids.length > 0 && v.bill_ids.every((b) => status(b) !== "Draft"))!
      const out = call(data.initialWorld, "refuel_data", "assistant", { customer_id: id, line_id: c.line_ids[0]!, gb_amount: 1 }, options)
      expect(out.error).toBe(false)
      expect(World.has(out.world, "bills", "BTEST1")).toBe(true)
    }))

  it.effect("break_vpn degrades the default VPN, so a later reconnect is slow too (kept within a run)", () =>
    Effect.gen(function* () {
      const data = yield* fresh
      let w = runEnvFunction(data.initialWorld, "user", "break_vpn", {}).world
      w = call(w, "disconnect_vpn", "user", {}).world
      w = call(w, "connect_vpn", "user", {}).world
      expect(call(w, "check_vpn_status", "user", {}).output).toContain("<PerformanceLevel.POOR: 'poor'>")
      // A fresh world starts from the pristine default.
      const clean = call(data.initialWorld, "connect_vpn", "user", {}).world
      expect(call(clean, "check_vpn_status", "user", {}).output).toContain("<PerformanceLevel.EXCELLENT: 'excellent'>")
    }))

  it("parses JSON with ints and floats apart", () => {
    expect(parsePyJson('{"a": 2.0, "b": 2, "c": [1e3]}')).toEqual(Either.right({ a: float(2), b: 2, c: [float(1000)] }))
  })

  it("parses the TOML subset, continuing the last element of an array of tables", () => {
    const parsed = parseToml('[[x]]\nid = "a"\n[[x.items]]\nn = 1\n[x.addr]\ncity = "B"\n[[x]]\nid = "c"\n')
    expect(parsed).toEqual(Either.right({ x: [{ id: "a", items: [{ n: 1 }], addr: { city: "B" } }, { id: "c" }] }))
    expect(Either.isLeft(parseToml("key = {inline = 1}"))).toBe(true)
  })
})

describe("raw arguments", () => {
  it.effect("callRaw keeps a model's 2.0 a float, as json.loads does", () =>
    Effect.gen(function* () {
      const data = yield* fresh
      const out = callRaw(data.initialWorld, "refuel_data", "assistant", '{"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0}')
      expect(out.output).toBe('{"message": "Successfully added 2.0 GB of data for line L1002 for $4.00", "new_data_refueling_gb": "2.0", "charge": "4.0"}')
      expect(callRaw(data.initialWorld, "refuel_data", "assistant", "[1]").error).toBe(true)
    }))
})
