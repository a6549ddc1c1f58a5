/**
 * The 16 retail tools of upstream src/tau2/domains/retail/tools.py, as pure `Tool`s: each
 * checks its inputs in upstream's order, so the same message wins, and answers what upstream's
 * `Environment.get_response` sends the agent: a string as is, a model as `json.dumps` of its
 * `model_dump()`, an exception as `"Error: " + str(e)`.
 *
 * Upstream mutates the DB in place as it goes; a few paths could raise after a mutation. The
 * transcription keeps that: a failing call returns the writes made before the failure.
 */
import { Either } from "effect"
import { type Canonical, type Tool, World } from "../../../src/index.ts"
import { dict, dumps, round2, sortedStrings, type PyValue } from "../common/pyjson.ts"
import { asJson, dumpOrder, dumpProduct, dumpUser, dumpVariant, type Order, type PaymentMethod, type Product, type User, type Variant } from "./model.ts"
import { applyCall, type Args, calculateTool, callToolkit, type Ctx, type Implementation, raise, readThrough, type Step, type ToolType, toolsOf, writeThrough } from "../common/toolkit.ts"
import { asCountable, asKey, asSized, count, lower, pyEq, pyStr, validateStrings } from "../common/python.ts"

const read = <A>(ctx: Ctx, table: string, key: string): A | undefined => readThrough<A>(ctx, table, key)

const put = (ctx: Ctx, table: "users" | "orders", key: string, value: Order | User): void => writeThrough(ctx, table, key, asJson(value))

const modelText = (value: PyValue): string => dumps(value)

// -- upstream's private helpers ------------------------------------------------------------------

const getOrder = (ctx: Ctx, orderId: Canonical.Json | undefined): Step<Order> =>
  Either.flatMap(asKey(orderId), (key) => {
    const order = key === undefined ? undefined : read<Order>(ctx, "orders", key)
    return order === undefined ? raise("Order not found") : Either.right(order)
  })

const getUser = (ctx: Ctx, userId: Canonical.Json | undefined): Step<User> =>
  Either.flatMap(asKey(userId), (key) => {
    const user = key === undefined ? undefined : read<User>(ctx, "users", key)
    return user === undefined ? raise("User not found") : Either.right(user)
  })

const getProduct = (ctx: Ctx, productId: Canonical.Json | undefined): Step<Product> =>
  Either.flatMap(asKey(productId), (key) => {
    const product = key === undefined ? undefined : read<Product>(ctx, "products", key)
    return product === undefined ? raise("Product not found") : Either.right(product)
  })

const findVariant = (product: Product, key: string | undefined): Variant | undefined =>
  key === undefined ? undefined : product.variants.find((v) => v.item_id === key)

const getVariant = (ctx: Ctx, productId: Canonical.Json | undefined, variantId: Canonical.Json | undefined): Step<Variant> =>
  Either.gen(function* () {
    const product = yield* getProduct(ctx, productId)
    const variant = findVariant(product, yield* asKey(variantId))
    return variant === undefined ? yield* raise<Variant>("Variant not found") : variant
  })

const getPaymentMethod = (ctx: Ctx, userId: Canonical.Json | undefined, paymentMethodId: Canonical.Json | undefined): Step<readonly [User, PaymentMethod]> =>
  Either.gen(function* () {
    const user = yield* getUser(ctx, userId)
    const key = yield* asKey(paymentMethodId)
    const method = key === undefined ? undefined : Object.hasOwn(user.payment_methods, key) ? user.payment_methods[key] : undefined
    return method === undefined ? yield* raise<readonly [User, PaymentMethod]>("Payment method not found") : ([user, method] as const)
  })

/** Set a gift card's balance (the user record is rewritten with it). */
const setBalance = (ctx: Ctx, userId: string, methodId: string, balance: number): void => {
  const user = read<User>(ctx, "users", userId)!
  const method = user.payment_methods[methodId]!
  put(ctx, "users", userId, { ...user, payment_methods: { ...user.payment_methods, [methodId]: { ...method, balance } as PaymentMethod } })
}

/** `for x in xs: if xs.count(x) > all_item_ids.count(x): raise ...` */
const checkCounts = (itemIds: ReadonlyArray<Canonical.Json>, order: Order, message: (itemId: Canonical.Json) => string): Step<void> => {
  const all = order.items.map((i) => i.item_id)
  for (const id of itemIds) if (count(itemIds, id) > count(all, id)) return raise(message(id))
  return Either.right(undefined)
}

const firstItemIndex = (items: ReadonlyArray<{ readonly item_id: string }>, itemId: Canonical.Json): number =>
  items.findIndex((i) => pyEq(i.item_id, itemId))

/** `sorted(xs)` of the ids as given (a string's characters, as Python iterates it). */
const sortedIds = (xs: ReadonlyArray<Canonical.Json>): Array<string> => sortedStrings(xs.map((x) => pyStr(x)))

const address = (a: Args): Step<Order["address"]> => {
  const fields = ["address1", "address2", "city", "country", "state", "zip"] as const
  const invalid = validateStrings("UserAddress", fields.map((f) => [f, a[f]] as const))
  if (invalid !== undefined) return raise(invalid)
  const s = (f: (typeof fields)[number]) => a[f] as string
  return Either.right({ address1: s("address1"), address2: s("address2"), city: s("city"), country: s("country"), state: s("state"), zip: s("zip") })
}

const isGiftCard = (m: PaymentMethod): m is Extract<PaymentMethod, { source: "gift_card" }> => m.source === "gift_card"

// -- the tools -------------------------------------------------------------------------------------

const implementations: Record<string, Implementation> = {
  calculate: calculateTool,

  cancel_pending_order: {
    params: ["order_id", "reason"],
    run: (ctx, a) =>
      Either.gen(function* () {
        const order = yield* getOrder(ctx, a["order_id"])
        if (order.status !== "pending") return yield* raise("Non-pending order cannot be cancelled")
        const reason = a["reason"]
        yield* asKey(reason) // `reason not in {...}`: a list or dict is unhashable
        if (reason !== "no longer needed" && reason !== "ordered by mistake") return yield* raise("Invalid reason")
        const refunds: Array<Order["payment_history"][number]> = []
        for (const payment of order.payment_history) {
          refunds.push({ transaction_type: "refund", amount: payment.amount, payment_method_id: payment.payment_method_id })
          const user = yield* getUser(ctx, order.user_id)
          const [, method] = yield* getPaymentMethod(ctx, user.user_id, payment.payment_method_id)
          // Refunds to a gift card are immediate: balance += amount, then round(balance, 2).
          if (isGiftCard(method)) setBalance(ctx, user.user_id, method.id, round2(method.balance + payment.amount))
        }
        const updated: Order = { ...order, status: "cancelled", cancel_reason: reason, payment_history: [...order.payment_history, ...refunds] }
        put(ctx, "orders", order.order_id, updated)
        return modelText(dumpOrder(updated))
      })
  },

  exchange_delivered_order_items: {
    params: ["order_id", "item_ids", "new_item_ids", "payment_method_id"],
    run: (ctx, a) =>
      Either.gen(function* () {
        const order = yield* getOrder(ctx, a["order_id"])
        if (order.status !== "delivered") return yield* raise("Non-delivered order cannot be exchanged")
        const itemIds = yield* asCountable(a["item_ids"])
        yield* checkCounts(itemIds, order, (id) => `Number of ${pyStr(id)} not found.`)
        const newItemIds = yield* asSized(a["new_item_ids"])
        if (itemIds.length !== newItemIds.length) return yield* raise("The number of items to be exchanged should match.")
        // Python's sum starts from the int 0; with no items it stays an int.
        let diff = 0
        for (let i = 0; i < itemIds.length; i++) {
          const item = order.items[firstItemIndex(order.items, itemIds[i]!)]
          if (item === undefined) return yield* raise(`Item ${pyStr(itemIds[i])} not found`)
          const variant = yield* getVariant(ctx, item.product_id, newItemIds[i])
          if (!variant.available) return yield* raise(`New item ${pyStr(newItemIds[i])} not found or available`)
          diff += variant.price - item.price
        }
        diff = round2(diff)
        const [, method] = yield* getPaymentMethod(ctx, order.user_id, a["payment_method_id"])
        if (isGiftCard(method) && method.balance < diff) {
          return yield* raise("Insufficient gift card balance to pay for the price difference")
        }
        const updated: Order = {
          ...order,
          status: "exchange requested",
          exchange_items: sortedIds(itemIds),
          exchange_new_items: sortedIds(newItemIds),
          exchange_payment_method_id: a["payment_method_id"] as string,
          exchange_price_difference: diff
        }
        put(ctx, "orders", order.order_id, updated)
        return modelText(dumpOrder(updated))
      })
  },

  find_user_id_by_name_zip: {
    params: ["first_name", "last_name", "zip"],
    run: (ctx, a) =>
      Either.gen(function* () {
        for (const [userId, value] of World.entries(ctx.world, "users")) {
          const user = value as unknown as User
          if (user.name.first_name.toLowerCase() !== (yield* lower(a["first_name"]))) continue
          if (user.name.last_name.toLowerCase() !== (yield* lower(a["last_name"]))) continue
          if (pyEq(user.address.zip, a["zip"])) return userId
        }
        return yield* raise("User not found")
      })
  },

  find_user_id_by_email: {
    params: ["email"],
    run: (ctx, a) =>
      Either.gen(function* () {
        for (const [userId, value] of World.entries(ctx.world, "users")) {
          if ((value as unknown as User).email.toLowerCase() === (yield* lower(a["email"]))) return userId
        }
        return yield* raise("User not found")
      })
  },

  get_order_details: {
    params: ["order_id"],
    run: (ctx, a) => Either.map(getOrder(ctx, a["order_id"]), (o) => modelText(dumpOrder(o)))
  },

  get_product_details: {
    params: ["product_id"],
    run: (ctx, a) => Either.map(getProduct(ctx, a["product_id"]), (p) => modelText(dumpProduct(p)))
  },

  get_item_details: {
    params: ["item_id"],
    run: (ctx, a) =>
      Either.gen(function* () {
        const key = yield* asKey(a["item_id"])
        // The first product, in db.json order, that has the item.
        for (const [, value] of World.entries(ctx.world, "products")) {
          const variant = findVariant(value as unknown as Product, key)
          if (variant !== undefined) return modelText(dumpVariant(variant))
        }
        return yield* raise("Item not found")
      })
  },

  get_user_details: {
    params: ["user_id"],
    run: (ctx, a) => Either.map(getUser(ctx, a["user_id"]), (u) => modelText(dumpUser(u)))
  },

  list_all_product_types: {
    params: [],
    run: (ctx) => {
      const byName = new Map<string, PyValue>()
      for (const [, value] of World.entries(ctx.world, "products")) {
        const p = value as unknown as Product
        byName.set(p.name, p.product_id)
      }
      return Either.right(dumps(dict([...byName]), { sortKeys: true }))
    }
  },

  modify_pending_order_address: {
    params: ["order_id", "address1", "address2", "city", "state", "country", "zip"],
    run: (ctx, a) =>
      Either.gen(function* () {
        const order = yield* getOrder(ctx, a["order_id"])
        if (!order.status.includes("pending")) return yield* raise("Non-pending order cannot be modified")
        const updated: Order = { ...order, address: yield* address(a) }
        put(ctx, "orders", order.order_id, updated)
        return modelText(dumpOrder(updated))
      })
  },

  modify_pending_order_items: {
    params: ["order_id", "item_ids", "new_item_ids", "payment_method_id"],
    run: (ctx, a) =>
      Either.gen(function* () {
        const order = yield* getOrder(ctx, a["order_id"])
        if (order.status !== "pending") return yield* raise("Non-pending order cannot be modified")
        const itemIds = yield* asCountable(a["item_ids"])
        yield* checkCounts(itemIds, order, (id) => `${pyStr(id)} not found`)
        const newItemIds = yield* asSized(a["new_item_ids"])
        if (itemIds.length !== newItemIds.length) return yield* raise("The number of items to be exchanged should match")
        let diff = 0
        // Upstream's loop variable: after the loop it is the LAST new item's variant, and every
        // modified item below takes its price and options (an upstream bug, kept).
        let variant: Variant | undefined
        for (let i = 0; i < itemIds.length; i++) {
          if (pyEq(itemIds[i], newItemIds[i])) return yield* raise("The new item id should be different from the old item id")
          const item = order.items[firstItemIndex(order.items, itemIds[i]!)]
          if (item === undefined) return yield* raise(`Item ${pyStr(itemIds[i])} not found`)
          variant = yield* getVariant(ctx, item.product_id, newItemIds[i])
          if (!variant.available) return yield* raise(`New item ${pyStr(newItemIds[i])} not found or available`)
          diff += variant.price - item.price
        }
        const [user, method] = yield* getPaymentMethod(ctx, order.user_id, a["payment_method_id"])
        if (isGiftCard(method) && method.balance < diff) return yield* raise("Insufficient gift card balance to pay for the new item")
        const payment = { transaction_type: diff > 0 ? "payment" : "refund", amount: Math.abs(diff), payment_method_id: method.id } as const
        let updated: Order = { ...order, payment_history: [...order.payment_history, payment] }
        put(ctx, "orders", order.order_id, updated)
        if (isGiftCard(method)) setBalance(ctx, user.user_id, method.id, round2(method.balance - diff))
        const items = [...updated.items]
        for (let i = 0; i < itemIds.length; i++) {
          const at = firstItemIndex(items, itemIds[i]!)
          if (at < 0) return yield* raise(`Item ${pyStr(itemIds[i])} not found`)
          items[at] = { ...items[at]!, item_id: newItemIds[i] as string, price: variant!.price, options: variant!.options }
          updated = { ...updated, items: [...items] }
          put(ctx, "orders", order.order_id, updated)
        }
        updated = { ...updated, status: "pending (item modified)" }
        put(ctx, "orders", order.order_id, updated)
        return modelText(dumpOrder(updated))
      })
  },

  modify_pending_order_payment: {
    params: ["order_id", "payment_method_id"],
    run: (ctx, a) =>
      Either.gen(function* () {
        const order = yield* getOrder(ctx, a["order_id"])
        if (!order.status.includes("pending")) return yield* raise("Non-pending order cannot be modified")
        const [user, method] = yield* getPaymentMethod(ctx, order.user_id, a["payment_method_id"])
        const first = order.payment_history[0]
        if (order.payment_history.length !== 1 || first === undefined || first.transaction_type !== "payment") {
          return yield* raise("There should be exactly one payment for a pending order")
        }
        if (first.payment_method_id === method.id) return yield* raise("The new payment method should be different from the current one")
        const amount = first.amount
        if (isGiftCard(method) && method.balance < amount) return yield* raise("Insufficient gift card balance to pay for the order")
        const updated: Order = {
          ...order,
          payment_history: [
            ...order.payment_history,
            { transaction_type: "payment", amount, payment_method_id: method.id },
            { transaction_type: "refund", amount, payment_method_id: first.payment_method_id }
          ]
        }
        put(ctx, "orders", order.order_id, updated)
        if (isGiftCard(method)) setBalance(ctx, user.user_id, method.id, round2(method.balance - amount))
        const [, old] = yield* getPaymentMethod(ctx, order.user_id, first.payment_method_id)
        if (isGiftCard(old)) setBalance(ctx, order.user_id, old.id, round2(old.balance + amount))
        return modelText(dumpOrder(updated))
      })
  },

  modify_user_address: {
    params: ["user_id", "address1", "address2", "city", "state", "country", "zip"],
    run: (ctx, a) =>
      Either.gen(function* () {
        const user = yield* getUser(ctx, a["user_id"])
        const updated: User = { ...user, address: yield* address(a) }
        put(ctx, "users", user.user_id, updated)
        return modelText(dumpUser(updated))
      })
  },

  return_delivered_order_items: {
    params: ["order_id", "item_ids", "payment_method_id"],
    run: (ctx, a) =>
      Either.gen(function* () {
        const order = yield* getOrder(ctx, a["order_id"])
        if (order.status !== "delivered") return yield* raise("Non-delivered order cannot be returned")
        const user = yield* getUser(ctx, order.user_id)
        const [, method] = yield* getPaymentMethod(ctx, user.user_id, a["payment_method_id"])
        if (!isGiftCard(method)) {
          const first = order.payment_history[0]
          if (first === undefined) return yield* raise("list index out of range")
          if (method.id !== first.payment_method_id) return yield* raise("Payment method should be the original payment method")
        }
        const itemIds = yield* asCountable(a["item_ids"])
        yield* checkCounts(itemIds, order, () => "Some item not found")
        const updated: Order = { ...order, status: "return requested", return_items: sortedIds(itemIds), return_payment_method_id: method.id }
        put(ctx, "orders", order.order_id, updated)
        return modelText(dumpOrder(updated))
      })
  },

  transfer_to_human_agents: {
    params: ["summary"],
    run: () => Either.right("Transfer successful")
  }
}

/** Upstream's toolkit order (tools.json). */
export const retailToolNames: ReadonlyArray<string> = Object.keys(implementations)

/**
 * Call a retail tool by name as upstream's `Environment.get_response` does: unknown names,
 * argument binding errors and exceptions all come back as `Error: ...` with `error: true`.
 */
export const callRetailTool = (world: World.World, name: string, args: Args): Tool.ToolOutcome => callToolkit("RetailTools", implementations, world, name, args)

export type { ToolType }

/**
 * The retail tools as `Tool`s, in the order and with the specs of tools.json; access from
 * tools-types.json (`write` for write tools, `read` for read, generic and think tools).
 */
export const makeRetailTools = (
  specs: ReadonlyArray<Tool.ToolSpec>,
  types: ReadonlyArray<{ readonly name: string; readonly type: ToolType }>
): ReadonlyArray<Tool.Tool> => toolsOf(specs, types, (world, name, args) => callRetailTool(world, name, args))

/** Apply a call's writes: the world after the call (failed calls included, as upstream). */
export const step = (world: World.World, name: string, args: Args): readonly [World.World, Tool.ToolOutcome] => applyCall(world, callRetailTool(world, name, args))
