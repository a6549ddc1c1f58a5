/**
 * The retail DB as world records, and their pydantic `model_dump` (upstream
 * src/tau2/domains/retail/data_model.py): field order, which fields are floats, and the
 * optional Order fields present as null.
 *
 * World tables: `products`, `users`, `orders`, keyed as in db.json and in db.json order.
 * A product's `variants` dict is kept as an array in db.json key order (each variant carries
 * its key as `item_id`), because a JS object would reorder the integer-like item ids.
 */
import { Schema } from "effect"
import type { Canonical } from "../../../src/index.ts"
import { dict, float, type PyDict, type PyValue } from "../common/pyjson.ts"

export const Options = Schema.Record({ key: Schema.String, value: Schema.String })

export const Variant = Schema.Struct({
  item_id: Schema.String,
  options: Options,
  available: Schema.Boolean,
  price: Schema.Number
})
export type Variant = typeof Variant.Type

export const Product = Schema.Struct({
  name: Schema.String,
  product_id: Schema.String,
  variants: Schema.Array(Variant)
})
export type Product = typeof Product.Type

export const Address = Schema.Struct({
  address1: Schema.String,
  address2: Schema.String,
  city: Schema.String,
  country: Schema.String,
  state: Schema.String,
  zip: Schema.String
})
export type Address = typeof Address.Type

export const PaymentMethod = Schema.Union(
  Schema.Struct({ source: Schema.Literal("credit_card"), id: Schema.String, brand: Schema.String, last_four: Schema.String }),
  Schema.Struct({ source: Schema.Literal("gift_card"), id: Schema.String, balance: Schema.Number }),
  Schema.Struct({ source: Schema.Literal("paypal"), id: Schema.String })
)
export type PaymentMethod = typeof PaymentMethod.Type

export const User = Schema.Struct({
  user_id: Schema.String,
  name: Schema.Struct({ first_name: Schema.String, last_name: Schema.String }),
  address: Address,
  email: Schema.String,
  payment_methods: Schema.Record({ key: Schema.String, value: PaymentMethod }),
  orders: Schema.Array(Schema.String)
})
export type User = typeof User.Type

export const OrderItem = Schema.Struct({
  name: Schema.String,
  product_id: Schema.String,
  item_id: Schema.String,
  price: Schema.Number,
  options: Options
})
export type OrderItem = typeof OrderItem.Type

export const OrderPayment = Schema.Struct({
  transaction_type: Schema.Literal("payment", "refund"),
  amount: Schema.Number,
  payment_method_id: Schema.String
})
export type OrderPayment = typeof OrderPayment.Type

export const OrderStatus = Schema.Literal(
  "processed",
  "pending",
  "pending (item modified)",
  "delivered",
  "cancelled",
  "exchange requested",
  "return requested"
)

const StringList = Schema.NullOr(Schema.Array(Schema.String))

/**
 * An order with every pydantic field present. Tools assign some fields without validation
 * (upstream `validate_assignment` is off), so `cancel_reason` is kept as any string.
 */
export const Order = Schema.Struct({
  order_id: Schema.String,
  user_id: Schema.String,
  address: Address,
  items: Schema.Array(OrderItem),
  status: Schema.String,
  fulfillments: Schema.Array(Schema.Struct({ tracking_id: Schema.Array(Schema.String), item_ids: Schema.Array(Schema.String) })),
  payment_history: Schema.Array(OrderPayment),
  cancel_reason: Schema.NullOr(Schema.String),
  exchange_items: StringList,
  exchange_new_items: StringList,
  exchange_payment_method_id: Schema.NullOr(Schema.String),
  exchange_price_difference: Schema.NullOr(Schema.Number),
  return_items: StringList,
  return_payment_method_id: Schema.NullOr(Schema.String)
})
export type Order = typeof Order.Type

/** The Order fields db.json may omit; pydantic fills them with None. */
export const optionalOrderFields = [
  "cancel_reason",
  "exchange_items",
  "exchange_new_items",
  "exchange_payment_method_id",
  "exchange_price_difference",
  "return_items",
  "return_payment_method_id"
] as const

/** A record as a world value (the schemas above describe JSON, so this is a cast). */
export const asJson = (value: Product | User | Order): Canonical.Json => value as unknown as Canonical.Json

// ---------------------------------------------------------------------------------------------
// model_dump, in pydantic field order

const strings = (xs: ReadonlyArray<string>): ReadonlyArray<PyValue> => xs

const optionsDump = (options: { readonly [k: string]: string }): PyDict => dict(Object.entries(options))

export const dumpVariant = (v: Variant): PyDict =>
  dict([
    ["item_id", v.item_id],
    ["options", optionsDump(v.options)],
    ["available", v.available],
    ["price", float(v.price)]
  ])

export const dumpProduct = (p: Product): PyDict =>
  dict([
    ["name", p.name],
    ["product_id", p.product_id],
    ["variants", dict(p.variants.map((v) => [v.item_id, dumpVariant(v)] as const))]
  ])

const dumpAddress = (a: Address): PyDict =>
  dict([
    ["address1", a.address1],
    ["address2", a.address2],
    ["city", a.city],
    ["country", a.country],
    ["state", a.state],
    ["zip", a.zip]
  ])

const dumpPaymentMethod = (m: PaymentMethod): PyDict => {
  switch (m.source) {
    case "credit_card":
      return dict([
        ["source", m.source],
        ["id", m.id],
        ["brand", m.brand],
        ["last_four", m.last_four]
      ])
    case "gift_card":
      return dict([
        ["source", m.source],
        ["id", m.id],
        ["balance", float(m.balance)]
      ])
    case "paypal":
      return dict([
        ["source", m.source],
        ["id", m.id]
      ])
  }
}

export const dumpUser = (u: User): PyDict =>
  dict([
    ["user_id", u.user_id],
    ["name", dict([["first_name", u.name.first_name], ["last_name", u.name.last_name]])],
    ["address", dumpAddress(u.address)],
    ["email", u.email],
    ["payment_methods", dict(Object.entries(u.payment_methods).map(([k, m]) => [k, dumpPaymentMethod(m)] as const))],
    ["orders", strings(u.orders)]
  ])

const nullable = <A>(value: A | null, f: (a: A) => PyValue): PyValue => (value === null ? null : f(value))

export const dumpOrder = (o: Order): PyDict =>
  dict([
    ["order_id", o.order_id],
    ["user_id", o.user_id],
    ["address", dumpAddress(o.address)],
    [
      "items",
      o.items.map((i) =>
        dict([
          ["name", i.name],
          ["product_id", i.product_id],
          ["item_id", i.item_id],
          ["price", float(i.price)],
          ["options", optionsDump(i.options)]
        ])
      )
    ],
    ["status", o.status],
    ["fulfillments", o.fulfillments.map((f) => dict([["tracking_id", strings(f.tracking_id)], ["item_ids", strings(f.item_ids)]]))],
    [
      "payment_history",
      o.payment_history.map((p) =>
        dict([
          ["transaction_type", p.transaction_type],
          ["amount", float(p.amount)],
          ["payment_method_id", p.payment_method_id]
        ])
      )
    ],
    ["cancel_reason", o.cancel_reason],
    ["exchange_items", nullable(o.exchange_items, strings)],
    ["exchange_new_items", nullable(o.exchange_new_items, strings)],
    ["exchange_payment_method_id", o.exchange_payment_method_id],
    // Assigned without validation: an exchange of no items stores Python's int 0 (sum of nothing).
    [
      "exchange_price_difference",
      nullable(o.exchange_price_difference, (d) => (o.exchange_items !== null && o.exchange_items.length === 0 ? d : float(d)))
    ],
    ["return_items", nullable(o.return_items, strings)],
    ["return_payment_method_id", o.return_payment_method_id]
  ])
