/**
 * The airline DB as world records, and their pydantic `model_dump` (upstream
 * src/tau2/domains/airline/data_model.py): field order, which fields are floats, the optional
 * `status` of a reservation present as null.
 *
 * World tables: `flights`, `users`, `reservations`, keyed as in db.json and in db.json order.
 * Every record is stored with its keys in pydantic field order (db.json writes a flight's and a
 * reservation flight's fields in another order), so a record's dump is the record itself with
 * the gift-card and certificate amounts marked as Python floats.
 */
import { Schema } from "effect"
import type { Canonical } from "../../../src/index.ts"
import { dict, float, type PyDict, type PyValue } from "../common/pyjson.ts"

export const CabinClass = Schema.Literal("business", "economy", "basic_economy")
export const FlightType = Schema.Literal("round_trip", "one_way")
export const Insurance = Schema.Literal("yes", "no")

const Seats = Schema.Record({ key: Schema.String, value: Schema.Number })

const Available = Schema.Struct({ status: Schema.Literal("available"), available_seats: Seats, prices: Seats })
const Landed = Schema.Struct({ status: Schema.Literal("landed"), actual_departure_time_est: Schema.String, actual_arrival_time_est: Schema.String })
const Cancelled = Schema.Struct({ status: Schema.Literal("cancelled") })
const Delayed = Schema.Struct({ status: Schema.Literal("delayed"), estimated_departure_time_est: Schema.String, estimated_arrival_time_est: Schema.String })
const Flying = Schema.Struct({ status: Schema.Literal("flying"), actual_departure_time_est: Schema.String, estimated_arrival_time_est: Schema.String })
const OnTime = Schema.Struct({ status: Schema.Literal("on time"), estimated_departure_time_est: Schema.String, estimated_arrival_time_est: Schema.String })

/** `FlightDateStatus`: one variant per status, each with only its own fields. */
export const FlightDateStatus = Schema.Union(Available, Landed, Cancelled, Delayed, Flying, OnTime)
export type FlightDateStatus = typeof FlightDateStatus.Type
export type AvailableDate = typeof Available.Type

/** The fields of each status variant, in pydantic field order. */
const statusFields: Readonly<Record<FlightDateStatus["status"], ReadonlyArray<string>>> = {
  available: ["status", "available_seats", "prices"],
  landed: ["status", "actual_departure_time_est", "actual_arrival_time_est"],
  cancelled: ["status"],
  delayed: ["status", "estimated_departure_time_est", "estimated_arrival_time_est"],
  flying: ["status", "actual_departure_time_est", "estimated_arrival_time_est"],
  "on time": ["status", "estimated_departure_time_est", "estimated_arrival_time_est"]
}

export const Flight = Schema.Struct({
  flight_number: Schema.String,
  origin: Schema.String,
  destination: Schema.String,
  scheduled_departure_time_est: Schema.String,
  scheduled_arrival_time_est: Schema.String,
  dates: Schema.Record({ key: Schema.String, value: FlightDateStatus })
})
export type Flight = typeof Flight.Type

export const Passenger = Schema.Struct({ first_name: Schema.String, last_name: Schema.String, dob: Schema.String })
export type Passenger = typeof Passenger.Type

export const Payment = Schema.Struct({ payment_id: Schema.String, amount: Schema.Number })
export type Payment = typeof Payment.Type

export const PaymentMethod = Schema.Union(
  Schema.Struct({ source: Schema.Literal("credit_card"), id: Schema.String, brand: Schema.String, last_four: Schema.String }),
  Schema.Struct({ source: Schema.Literal("gift_card"), id: Schema.String, amount: Schema.Number }),
  Schema.Struct({ source: Schema.Literal("certificate"), id: Schema.String, amount: Schema.Number })
)
export type PaymentMethod = typeof PaymentMethod.Type

export const User = Schema.Struct({
  user_id: Schema.String,
  name: Schema.Struct({ first_name: Schema.String, last_name: Schema.String }),
  address: Schema.Struct({
    address1: Schema.String,
    address2: Schema.NullOr(Schema.String),
    city: Schema.String,
    country: Schema.String,
    state: Schema.String,
    zip: Schema.String
  }),
  email: Schema.String,
  dob: Schema.String,
  payment_methods: Schema.Record({ key: Schema.String, value: PaymentMethod }),
  saved_passengers: Schema.Array(Passenger),
  membership: Schema.Literal("gold", "silver", "regular"),
  reservations: Schema.Array(Schema.String)
})
export type User = typeof User.Type

export const ReservationFlight = Schema.Struct({
  flight_number: Schema.String,
  origin: Schema.String,
  destination: Schema.String,
  date: Schema.String,
  price: Schema.Number
})
export type ReservationFlight = typeof ReservationFlight.Type

/**
 * A reservation with every pydantic field. Tools assign `cabin` without validation (upstream's
 * `update_reservation_flights` stores any cabin), so it is kept as any string.
 */
export const Reservation = Schema.Struct({
  reservation_id: Schema.String,
  user_id: Schema.String,
  origin: Schema.String,
  destination: Schema.String,
  flight_type: FlightType,
  cabin: Schema.String,
  flights: Schema.Array(ReservationFlight),
  passengers: Schema.Array(Passenger),
  payment_history: Schema.Array(Payment),
  created_at: Schema.String,
  total_baggages: Schema.Number,
  nonfree_baggages: Schema.Number,
  insurance: Insurance,
  status: Schema.NullOr(Schema.Literal("cancelled"))
})
export type Reservation = typeof Reservation.Type

/** A record as a world value (the schemas above describe JSON, so this is a cast). */
export const asJson = (value: Flight | User | Reservation): Canonical.Json => value as unknown as Canonical.Json

// ---------------------------------------------------------------------------------------------
// Records in pydantic field order

type Obj = { readonly [key: string]: unknown }

const pick = (o: Obj, keys: ReadonlyArray<string>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k of keys) if (Object.hasOwn(o, k)) out[k] = o[k]
  return out
}

const mapValues = (o: Obj, f: (v: Obj) => unknown): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(o)) out[k] = f(v as Obj)
  return out
}

const passengerOrder = ["first_name", "last_name", "dob"]

/** A db.json flight with its fields (and each date's) in model order. */
export const orderFlight = (f: Obj): Record<string, unknown> => ({
  ...pick(f, ["flight_number", "origin", "destination", "scheduled_departure_time_est", "scheduled_arrival_time_est"]),
  dates: mapValues(f["dates"] as Obj, (d) => pick(d, statusFields[d["status"] as FlightDateStatus["status"]] ?? Object.keys(d)))
})

const methodOrder = (m: Obj): ReadonlyArray<string> => (m["source"] === "credit_card" ? ["source", "id", "brand", "last_four"] : ["source", "id", "amount"])

/** A db.json user in model order. */
export const orderUser = (u: Obj): Record<string, unknown> => ({
  user_id: u["user_id"],
  name: pick(u["name"] as Obj, ["first_name", "last_name"]),
  // address2 is Optional[str] = None upstream.
  address: { ...pick(u["address"] as Obj, ["address1"]), address2: (u["address"] as Obj)["address2"] ?? null, ...pick(u["address"] as Obj, ["city", "country", "state", "zip"]) },
  email: u["email"],
  dob: u["dob"],
  payment_methods: mapValues(u["payment_methods"] as Obj, (m) => pick(m, methodOrder(m))),
  saved_passengers: (u["saved_passengers"] as ReadonlyArray<Obj>).map((p) => pick(p, passengerOrder)),
  membership: u["membership"],
  reservations: u["reservations"]
})

/** A db.json reservation in model order, `status` null when db.json has none. */
export const orderReservation = (r: Obj): Record<string, unknown> => ({
  ...pick(r, ["reservation_id", "user_id", "origin", "destination", "flight_type", "cabin"]),
  flights: (r["flights"] as ReadonlyArray<Obj>).map((f) => pick(f, ["flight_number", "origin", "destination", "date", "price"])),
  passengers: (r["passengers"] as ReadonlyArray<Obj>).map((p) => pick(p, passengerOrder)),
  payment_history: (r["payment_history"] as ReadonlyArray<Obj>).map((p) => pick(p, ["payment_id", "amount"])),
  ...pick(r, ["created_at", "total_baggages", "nonfree_baggages", "insurance"]),
  status: r["status"] ?? null
})

// ---------------------------------------------------------------------------------------------
// model_dump

/**
 * A JSON value as a Python value: objects as dicts in their key order, integral numbers as ints
 * and the others as floats (a non-integral count an agent sent is stored as given).
 */
export const pyOf = (v: unknown): PyValue => {
  if (typeof v === "number") return Number.isInteger(v) ? v : float(v)
  if (v === null || typeof v !== "object") return v as PyValue
  if (Array.isArray(v)) return v.map(pyOf)
  return dict(Object.entries(v).map(([k, x]) => [k, pyOf(x)] as const))
}

/** A payment method: gift-card and certificate amounts are floats. */
const dumpMethod = (m: PaymentMethod): PyDict =>
  m.source === "credit_card" ? (pyOf(m) as PyDict) : dict([["source", m.source], ["id", m.id], ["amount", float(m.amount)]])

export const dumpUser = (u: User): PyDict =>
  dict(
    Object.entries(u).map(([k, v]) =>
      k === "payment_methods"
        ? ([k, dict(Object.entries(u.payment_methods).map(([id, m]) => [id, dumpMethod(m)] as const))] as const)
        : ([k, pyOf(v)] as const)
    )
  )

export const dumpReservation = (r: Reservation): PyDict => pyOf(r) as PyDict

export const dumpFlight = (f: Flight): PyDict => pyOf(f) as PyDict
