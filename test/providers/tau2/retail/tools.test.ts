import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Json } from "../../../../src/content/Canonical.ts"
import * as World from "../../../../src/world/World.ts"
import { loadRetailData, type RetailData } from "../../../../providers/tau2/retail/data.ts"
import type { Order } from "../../../../providers/tau2/retail/model.ts"
import { callRetailTool, makeRetailTools, retailToolNames, step } from "../../../../providers/tau2/retail/tools.ts"

let data: RetailData

beforeAll(async () => {
  data = await Effect.runPromise(loadRetailData())
})

type Call = readonly [string, { readonly [key: string]: Json }]

/** Run calls in order from the initial DB; the outcomes and the final world. */
const run = (...calls: ReadonlyArray<Call>) => {
  let world = data.initialWorld
  const outcomes = calls.map(([name, args]) => {
    const [next, outcome] = step(world, name, args)
    world = next
    return outcome
  })
  return { outcomes, world }
}

const json = (output: string): Order => JSON.parse(output) as Order

// Fixtures are orders of the pinned db.json; expected values are what upstream's tools answer.
describe("retail tools: surprising behaviours kept from upstream", () => {
  it("modify_pending_order_items gives every modified item the LAST new variant's price and options, and an unrounded amount", () => {
    const { outcomes } = run([
      "modify_pending_order_items",
      { order_id: "#W5918442", item_ids: ["1725100896", "5312063289"], new_item_ids: ["9007697085", "6843647669"], payment_method_id: "credit_card_5051208" }
    ])
    const order = json(outcomes[0]!.output)
    expect(order.items[0]).toEqual({
      name: "Perfume", product_id: "6858788497", item_id: "9007697085", price: 180.1,
      options: { "deck material": "bamboo", length: "28 inch", design: "graphic" }
    })
    expect(order.items[1]!.item_id).toBe("6843647669")
    expect(outcomes[0]!.output).toContain('{"transaction_type": "payment", "amount": 14.249999999999943, "payment_method_id": "credit_card_5051208"}')
    expect(order.status).toBe("pending (item modified)")
  })

  it("an empty modification is a refund of 0.0 and still marks the order modified", () => {
    const { outcomes } = run([
      "modify_pending_order_items",
      { order_id: "#W5918442", item_ids: [], new_item_ids: [], payment_method_id: "credit_card_5051208" }
    ])
    expect(outcomes[0]!.output).toContain('{"transaction_type": "refund", "amount": 0.0, "payment_method_id": "credit_card_5051208"}')
    expect(outcomes[0]!.output).toContain('"status": "pending (item modified)"')
  })

  it("an empty exchange stores Python's int 0 as the price difference", () => {
    const { outcomes } = run([
      "exchange_delivered_order_items",
      { order_id: "#W4817420", item_ids: [], new_item_ids: [], payment_method_id: "gift_card_8168843" }
    ])
    expect(outcomes[0]!.output).toContain('"exchange_items": [], "exchange_new_items": [], "exchange_payment_method_id": "gift_card_8168843", "exchange_price_difference": 0, ')
    expect(outcomes[0]!.output).toContain('"status": "exchange requested"')
  })

  it("an exchange may keep the same item (difference 0.0); modify-items may not", () => {
    const { outcomes } = run(
      ["exchange_delivered_order_items", { order_id: "#W6304490", item_ids: ["6956751343"], new_item_ids: ["6956751343"], payment_method_id: "credit_card_4420174" }],
      ["modify_pending_order_items", { order_id: "#W6779827", item_ids: ["7896397433"], new_item_ids: ["7896397433"], payment_method_id: "gift_card_7219486" }]
    )
    expect(outcomes[0]!.output).toContain('"exchange_price_difference": 0.0')
    expect(outcomes[1]).toEqual({ output: "Error: The new item id should be different from the old item id", error: true, writes: [] })
  })

  it("an empty return is accepted and changes the status", () => {
    const { outcomes } = run(["return_delivered_order_items", { order_id: "#W6304490", item_ids: [], payment_method_id: "credit_card_4420174" }])
    expect(outcomes[0]!.output).toContain('"status": "return requested"')
    expect(outcomes[0]!.output).toContain('"return_items": [], "return_payment_method_id": "credit_card_4420174"')
  })

  it("a cancel after a payment change refunds every history entry and credits the original gift card twice more", () => {
    const { outcomes } = run(
      ["modify_pending_order_payment", { order_id: "#W6779827", payment_method_id: "credit_card_9789590" }],
      ["cancel_pending_order", { order_id: "#W6779827", reason: "no longer needed" }],
      ["get_user_details", { user_id: "ethan_lopez_6291" }]
    )
    expect(json(outcomes[0]!.output).status).toBe("pending")
    const history = json(outcomes[1]!.output).payment_history
    expect(history.map((p) => `${p.transaction_type}:${p.payment_method_id}`)).toEqual([
      "payment:gift_card_7219486", "payment:credit_card_9789590", "refund:gift_card_7219486",
      "refund:gift_card_7219486", "refund:credit_card_9789590", "refund:gift_card_7219486"
    ])
    // 49.0 + 4079.45 (payment change) + 2 x 4079.45 (cancel), rounded to cents at each step.
    expect(outcomes[2]!.output).toContain('"gift_card_7219486": {"source": "gift_card", "id": "gift_card_7219486", "balance": 12287.35}')
  })

  it("modify-address accepts any status containing 'pending'; modify-payment then needs exactly one payment", () => {
    const { outcomes } = run(
      ["modify_pending_order_items", { order_id: "#W5918442", item_ids: [], new_item_ids: [], payment_method_id: "credit_card_5051208" }],
      ["modify_pending_order_address", { order_id: "#W5918442", address1: "1 Rue", address2: "", city: "Genève", state: "GE", country: "CH", zip: "1201" }],
      ["modify_pending_order_payment", { order_id: "#W5918442", payment_method_id: "credit_card_5051208" }],
      ["cancel_pending_order", { order_id: "#W5918442", reason: "no longer needed" }]
    )
    // The dump lists country before state, and escapes non-ASCII.
    expect(outcomes[1]!.output).toContain('"address": {"address1": "1 Rue", "address2": "", "city": "Gen\\u00e8ve", "country": "CH", "state": "GE", "zip": "1201"}')
    expect(outcomes[2]!.output).toBe("Error: There should be exactly one payment for a pending order")
    expect(outcomes[3]!.output).toBe("Error: Non-pending order cannot be cancelled")
  })

  it("finds users case-insensitively, first match in db.json order", () => {
    const { outcomes } = run(
      ["find_user_id_by_email", { email: "NOAH.Brown7922@EXAMPLE.com" }],
      ["find_user_id_by_name_zip", { first_name: "noah", last_name: "BROWN", zip: "80279" }]
    )
    expect(outcomes.map((o) => o.output)).toEqual(["noah_brown_6181", "noah_brown_6181"])
  })

  it("prints money as floats even when integral, in pydantic field order", () => {
    const { outcomes } = run(["get_item_details", { item_id: "3928046918" }])
    expect(outcomes[0]!.output).toBe(
      '{"item_id": "3928046918", "options": {"color": "black", "size": "large", "material": "nylon", "compartment": "camera"}, "available": true, "price": 198.0}'
    )
  })

  it("lists product types as json.dumps(sort_keys=True) with default separators", () => {
    const { outcomes } = run(["list_all_product_types", {}])
    expect(outcomes[0]!.output.startsWith('{"Action Camera": "3377618313", "Air Purifier": "3821016478", ')).toBe(true)
    expect(Object.keys(JSON.parse(outcomes[0]!.output))).toHaveLength(50)
  })

  it("answers unknown tools and wrong arguments with upstream's error texts", () => {
    expect(callRetailTool(data.initialWorld, "think", { thought: "x" }).output).toBe("Error: Tool 'think' not found.")
    expect(callRetailTool(data.initialWorld, "get_order_details", { order_id: "#W2378156", x: 1 }).output).toBe(
      "Error: RetailTools.get_order_details() got an unexpected keyword argument 'x'"
    )
    expect(callRetailTool(data.initialWorld, "exchange_delivered_order_items", { order_id: "#W2378156" }).output).toBe(
      "Error: RetailTools.exchange_delivered_order_items() missing 3 required positional arguments: 'item_ids', 'new_item_ids', and 'payment_method_id'"
    )
    expect(callRetailTool(data.initialWorld, "find_user_id_by_email", { email: ["x"] }).output).toBe("Error: 'list' object has no attribute 'lower'")
    expect(callRetailTool(data.initialWorld, "get_order_details", { order_id: "W2378156" }).output).toBe("Error: Order not found")
  })

  it("never changes the world on a failed call, and a read never writes", () => {
    const failed = callRetailTool(data.initialWorld, "cancel_pending_order", { order_id: "#W6779827", reason: "because" })
    expect(failed).toEqual({ output: "Error: Invalid reason", error: true, writes: [] })
    const read = callRetailTool(data.initialWorld, "get_order_details", { order_id: "#W6779827" })
    expect(read.writes).toEqual([])
  })

  it("offers the 16 tools of tools.json with read/write access from tools-types.json", () => {
    const tools = makeRetailTools(data.toolSpecs, data.toolTypes)
    expect(tools.map((t) => t.spec.name)).toEqual(retailToolNames)
    expect(tools.filter((t) => t.access === "write").map((t) => t.spec.name)).toEqual([
      "cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
      "modify_pending_order_items", "modify_pending_order_payment", "modify_user_address", "return_delivered_order_items"
    ])
    const calculate = tools.find((t) => t.spec.name === "calculate")!
    expect(calculate.access).toBe("read")
    expect(calculate.run(data.initialWorld, { expression: "2 + 2" }).output).toBe("4.0")
  })

  it("writes only the records a call changes, and the world shares the rest", () => {
    const outcome = callRetailTool(data.initialWorld, "modify_pending_order_payment", { order_id: "#W6779827", payment_method_id: "credit_card_9789590" })
    expect(outcome.writes.map((w) => `${w.table}/${w.key}`).sort()).toEqual(["orders/#W6779827", "users/ethan_lopez_6291"])
    const after = World.apply(data.initialWorld, outcome.writes)
    expect(World.get(after, "orders", "#W2378156")).toBe(World.get(data.initialWorld, "orders", "#W2378156"))
    expect(World.equals(after, data.initialWorld)).toBe(false)
  })
})
