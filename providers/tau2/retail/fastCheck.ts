/**
 * The load's check of db.json's records without Effect Schema's decoder, for the records that
 * pass: a decoder is built up and run per record, and before the JIT warms (a fresh process's
 * first load) checking the 1,500 users and orders that way cost more than parsing the file.
 *
 * Each predicate accepts only values that model.ts's schema decodes (it is stricter where that
 * is simpler: a struct must be a plain object, not an array); a record it refuses is decoded by
 * the schema as before, whose error is the load's. `product` also makes what the schema's decode
 * makes of a valid product (its fields in schema order, nothing else), so the world is the same.
 */
import type { Canonical } from "../../../src/index.ts"

type Json = Canonical.Json
type Obj = { readonly [key: string]: unknown }

const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v)
const isString = (v: unknown): v is string => typeof v === "string"
const isNumber = (v: unknown): v is number => typeof v === "number"

const everyValue = (v: unknown, f: (x: unknown) => boolean): boolean => {
  if (!isObject(v)) return false
  for (const k in v) if (Object.hasOwn(v, k) && !f(v[k])) return false
  return true
}
const everyItem = (v: unknown, f: (x: unknown) => boolean): boolean => {
  if (!Array.isArray(v)) return false
  for (let i = 0; i < v.length; i++) if (!f(v[i])) return false
  return true
}
const stringList = (v: unknown): boolean => everyItem(v, isString)
const nullOr = (v: unknown, f: (x: unknown) => boolean): boolean => v === null || f(v)
const options = (v: unknown): boolean => everyValue(v, isString)

const address = (v: unknown): boolean =>
  isObject(v) && isString(v["address1"]) && isString(v["address2"]) && isString(v["city"]) && isString(v["country"]) && isString(v["state"]) && isString(v["zip"])

const paymentMethod = (v: unknown): boolean => {
  if (!isObject(v) || !isString(v["id"])) return false
  switch (v["source"]) {
    case "credit_card":
      return isString(v["brand"]) && isString(v["last_four"])
    case "gift_card":
      return isNumber(v["balance"])
    case "paypal":
      return true
    default:
      return false
  }
}

/** A user the `User` schema decodes. */
export const isUser = (v: unknown): boolean => {
  if (!isObject(v) || !isString(v["user_id"]) || !isString(v["email"])) return false
  const name = v["name"]
  return isObject(name) && isString(name["first_name"]) && isString(name["last_name"]) && address(v["address"]) &&
    everyValue(v["payment_methods"], paymentMethod) && stringList(v["orders"])
}

const orderItem = (v: unknown): boolean =>
  isObject(v) && isString(v["name"]) && isString(v["product_id"]) && isString(v["item_id"]) && isNumber(v["price"]) && options(v["options"])
const fulfillment = (v: unknown): boolean => isObject(v) && stringList(v["tracking_id"]) && stringList(v["item_ids"])
const payment = (v: unknown): boolean =>
  isObject(v) && (v["transaction_type"] === "payment" || v["transaction_type"] === "refund") && isNumber(v["amount"]) && isString(v["payment_method_id"])

/** An order (its optional fields filled) the `Order` schema decodes. */
export const isOrder = (v: unknown): boolean =>
  isObject(v) && isString(v["order_id"]) && isString(v["user_id"]) && address(v["address"]) && everyItem(v["items"], orderItem) &&
  isString(v["status"]) && everyItem(v["fulfillments"], fulfillment) && everyItem(v["payment_history"], payment) &&
  nullOr(v["cancel_reason"], isString) && nullOr(v["exchange_items"], stringList) && nullOr(v["exchange_new_items"], stringList) &&
  nullOr(v["exchange_payment_method_id"], isString) && nullOr(v["exchange_price_difference"], isNumber) && nullOr(v["return_items"], stringList) &&
  nullOr(v["return_payment_method_id"], isString)

const variant = (v: unknown): boolean => isObject(v) && isString(v["item_id"]) && options(v["options"]) && typeof v["available"] === "boolean" && isNumber(v["price"])

/**
 * What the `Product` schema's decode makes of `{name, product_id, variants}`: the same fields in
 * schema order (a variant's too, its options copied key by key), or undefined when this check
 * does not vouch for it (the schema then decodes it).
 */
export const product = (name: unknown, productId: unknown, variants: ReadonlyArray<unknown>): Json | undefined => {
  if (!isString(name) || !isString(productId) || !everyItem(variants, variant)) return undefined
  const out: Array<Json> = []
  for (const v of variants as ReadonlyArray<Obj>) {
    const opts: { [key: string]: Json } = {}
    const given = v["options"] as Obj
    for (const k in given) if (Object.hasOwn(given, k)) opts[k] = given[k] as string
    out.push({ item_id: v["item_id"] as string, options: opts, available: v["available"] as boolean, price: v["price"] as number })
  }
  return { name, product_id: productId, variants: out }
}
