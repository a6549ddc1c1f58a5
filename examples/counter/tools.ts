/** The counter's tools. A tool is pure: it returns the writes, the effect service applies them. */
import { Tool, World } from "assay"

export const valueOf = (world: World.World): number => {
  const value = World.get(world, "counter", "value")
  return typeof value === "number" ? value : 0
}

const step = (name: "increment" | "decrement", sign: 1 | -1): Tool.Tool => ({
  spec: {
    name,
    description: `${sign > 0 ? "Add" : "Subtract"} \`by\` (a positive integer) ${sign > 0 ? "to" : "from"} the counter; returns the new value.`,
    parameters: { type: "object", properties: { by: { type: "integer" } }, required: ["by"] }
  },
  access: "write",
  run: (world, args) => {
    const by = args["by"]
    if (typeof by !== "number" || !Number.isInteger(by) || by <= 0) return Tool.fail("Error: by must be a positive integer")
    const next = valueOf(world) + sign * by
    return Tool.ok(String(next), [{ table: "counter", key: "value", value: next }])
  }
})

const read: Tool.Tool = {
  spec: { name: "read", description: "The counter's current value.", parameters: { type: "object", properties: {}, required: [] } },
  access: "read",
  run: (world) => Tool.ok(String(valueOf(world)))
}

export const tools: ReadonlyArray<Tool.Tool> = [read, step("increment", 1), step("decrement", -1)]
