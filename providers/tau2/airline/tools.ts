/**
 * The 14 airline tools of upstream src/tau2/domains/airline/tools.py, as pure `Tool`s: each
 * checks its inputs in upstream's order, so the same message wins, and answers what upstream's
 * `Environment.get_response` sends the agent: a string as is, a model (or a list of models) as
 * `json.dumps` of its `model_dump()`, an exception as `"Error: " + str(e)`.
 *
 * Upstream mutates the DB in place as it goes; `book_reservation` can raise after mutating (the
 * same certificate twice). The transcription keeps that: a failing call returns the writes made
 * before the failure, and they are applied as upstream's are.
 */
import { Either } from "effect"
import { type Canonical, type Tool, World } from "../../../src/index.ts"
import { applyCall, type Args, calculateTool, callToolkit, type Ctx, type Implementation, raise, readThrough, type Step, type ToolType, toolsOf, writeThrough } from "../common/toolkit.ts"
import { parseJsonWith } from "../common/orderedJson.ts"
import { dict, dumps, reprFloat, type PyValue } from "../common/pyjson.ts"
import {
  asJson,
  dumpReservation,
  dumpUser,
  type AvailableDate,
  type Flight,
  type Passenger,
  type Payment,
  type PaymentMethod,
  pyOf,
  type Reservation,
  type ReservationFlight,
  type User
} from "./model.ts"
import {
  asKey,
  floatField,
  int,
  literal,
  pyRepr,
  pyStr,
  type FieldKind,
  models,
  pyType,
  str,
  validateModel
} from "./python.ts"

type Table = "flights" | "users" | "reservations"

const read = <A>(ctx: Ctx, table: Table, key: string): A | undefined => readThrough<A>(ctx, table, key)

const put = (ctx: Ctx, table: Table, key: string, value: Flight | User | Reservation): void => writeThrough(ctx, table, key, asJson(value))

const modelText = (value: PyValue): string => dumps(value)

/** The value at `key` of a dict, as Python's `d[key]` / `key in d` find it (own keys only). */
const lookup = <V>(d: { readonly [key: string]: V }, key: string | undefined): V | undefined =>
  key !== undefined && Object.hasOwn(d, key) ? d[key] : undefined

// -- upstream's private helpers ------------------------------------------------------------------

const getUser = (ctx: Ctx, userId: Canonical.Json | undefined): Step<User> =>
  Either.flatMap(asKey(userId), (key) => {
    const user = key === undefined ? undefined : read<User>(ctx, "users", key)
    return user === undefined ? raise(`User ${pyStr(userId)} not found`) : Either.right(user)
  })

const getReservation = (ctx: Ctx, reservationId: Canonical.Json | undefined): Step<Reservation> =>
  Either.flatMap(asKey(reservationId), (key) => {
    const reservation = key === undefined ? undefined : read<Reservation>(ctx, "reservations", key)
    return reservation === undefined ? raise(`Reservation ${pyStr(reservationId)} not found`) : Either.right(reservation)
  })

const getFlight = (ctx: Ctx, flightNumber: Canonical.Json | undefined): Step<Flight> =>
  Either.flatMap(asKey(flightNumber), (key) => {
    const flight = key === undefined ? undefined : read<Flight>(ctx, "flights", key)
    return flight === undefined ? raise(`Flight ${pyStr(flightNumber)} not found`) : Either.right(flight)
  })

const getFlightInstance = (ctx: Ctx, flightNumber: Canonical.Json | undefined, date: Canonical.Json | undefined): Step<Flight["dates"][string]> =>
  Either.gen(function*() {
    const flight = yield* getFlight(ctx, flightNumber)
    const instance = lookup(flight.dates, yield* asKey(date))
    return instance === undefined ? yield* raise<Flight["dates"][string]>(`Flight ${pyStr(flightNumber)} not found on date ${pyStr(date)}`) : instance
  })

/** `d[key]` on a cabin dict: a missing cabin is a KeyError, whose `str()` is the key's repr. */
const cabinValue = (seats: { readonly [cabin: string]: number }, cabin: Canonical.Json | undefined): Step<number> =>
  Either.flatMap(asKey(cabin), (key) => {
    const v = lookup(seats, key)
    return v === undefined ? raise(pyRepr(cabin)) : Either.right(v)
  })

const NEW_RESERVATION_IDS = ["HATHAT", "HATHAU", "HATHAV"] as const
const NEW_CERTIFICATE_IDS = ["certificate_3221322", "certificate_3221323", "certificate_3221324"] as const
const NOW = "2024-05-15T15:00:00"

const flightInfoFields = [["flight_number", str], ["date", str]] as const
const passengerFields = [["first_name", str], ["last_name", str], ["dob", str]] as const
const paymentFields = [["payment_id", str], ["amount", int]] as const

const isDict = (v: Canonical.Json | undefined): v is { readonly [key: string]: Canonical.Json } => v !== null && typeof v === "object" && !Array.isArray(v)

/** What `for x in v` visits: a list's items, a string's characters, a dict's keys; undefined when Python cannot iterate it. */
const iterate = (v: Canonical.Json | undefined): ReadonlyArray<Canonical.Json> | undefined =>
  Array.isArray(v) ? (v as ReadonlyArray<Canonical.Json>) : typeof v === "string" ? Array.from(v) : isDict(v) ? Object.keys(v) : undefined

/** `len(v)` of a list, string or dict (what a reservation's unvalidated passengers may be). */
const pyLen = (v: Canonical.Json | undefined): Step<number> => {
  const items = iterate(v)
  return items === undefined ? raise(`object of type '${pyType(v)}' has no len()`) : Either.right(items.length)
}

/**
 * `if all(isinstance(x, dict) for x in xs): xs = [Model(**x) for x in xs]`: the validated models
 * (in the model's field order), or the value as given when some element is not a dict (upstream
 * then goes on with it unconverted).
 */
type Converted<A> = { readonly models: ReadonlyArray<A> } | { readonly raw: Canonical.Json }

const convert = <A>(v: Canonical.Json | undefined, model: string, fields: ReadonlyArray<readonly [string, FieldKind]>): Step<Converted<A>> => {
  const items = iterate(v)
  if (items === undefined) return raise(`'${pyType(v)}' object is not iterable`)
  if (!items.every(isDict)) return Either.right({ raw: v as Canonical.Json })
  const out: Array<A> = []
  for (const item of items) {
    const r = validateModel(model, fields, item as { readonly [key: string]: Canonical.Json })
    if (!r.ok) return raise(r.message)
    out.push(r.value as unknown as A)
  }
  return Either.right({ models: out })
}

/** The AttributeError of reading `attribute` of the first element of an unconverted list. */
const attributeError = (raw: Canonical.Json, attribute: string): string => `'${pyType(iterate(raw)![0])}' object has no attribute '${attribute}'`

type FlightInfo = { readonly flight_number: string; readonly date: string }

const isAvailable = (d: Flight["dates"][string]): d is AvailableDate => d.status === "available"

/** A number as Python computes with it (bool is an int); otherwise the TypeError of `a - b`. */
const numeric = (v: Canonical.Json | undefined, op: string, other: "left" | "right", otherType = "int"): Step<number> =>
  typeof v === "number"
    ? Either.right(v)
    : typeof v === "boolean"
      ? Either.right(v ? 1 : 0)
      : raise(`unsupported operand type(s) for ${op}: '${other === "left" ? pyType(v) : otherType}' and '${other === "left" ? otherType : pyType(v)}'`)

/** Replace one payment method of a user (a gift card's new amount), keeping its place. */
const setAmount = (ctx: Ctx, userId: string, methodId: string, amount: number): void => {
  const user = read<User>(ctx, "users", userId)!
  const method = user.payment_methods[methodId]!
  put(ctx, "users", userId, { ...user, payment_methods: { ...user.payment_methods, [methodId]: { ...method, amount } as PaymentMethod } })
}

/**
 * `_payment_for_update`: the method must be the user's and not a certificate; a gift card pays
 * (or, for a negative total, is credited) at once. The payment entry, or null for a total of 0.
 */
const paymentForUpdate = (ctx: Ctx, user: User, paymentId: Canonical.Json | undefined, total: number): Step<Payment | null> =>
  Either.gen(function*() {
    const key = yield* asKey(paymentId)
    const method = lookup(user.payment_methods, key)
    if (method === undefined) return yield* raise<Payment | null>("Payment method not found")
    if (method.source === "certificate") return yield* raise<Payment | null>("Certificate cannot be used to update reservation")
    if (method.source === "gift_card" && method.amount < total) return yield* raise<Payment | null>("Gift card balance is not enough")
    if (method.source === "gift_card") setAmount(ctx, user.user_id, key!, method.amount - total)
    return total !== 0 ? { payment_id: key!, amount: total } : null
  })

/** `DirectFlight(...)` of a flight on a date, `date` as given (null in a direct search). */
const directFlight = (flight: Flight, instance: AvailableDate, date: string | null): PyValue =>
  dict([
    ["flight_number", flight.flight_number],
    ["origin", flight.origin],
    ["destination", flight.destination],
    ["status", "available"],
    ["scheduled_departure_time_est", flight.scheduled_departure_time_est],
    ["scheduled_arrival_time_est", flight.scheduled_arrival_time_est],
    ["date", date],
    ["available_seats", pyOf(instance.available_seats)],
    ["prices", pyOf(instance.prices)]
  ])

/**
 * `_search_direct_flight`: flights in db.json order from `origin` to `destination` (None matches
 * any) that fly on `date` with status available and leave at or after `leaveAfter` (compared
 * as strings).
 */
const searchDirect = (
  ctx: Ctx,
  date: Canonical.Json | undefined,
  origin: Canonical.Json | undefined,
  destination: Canonical.Json | undefined,
  leaveAfter?: string
): Step<ReadonlyArray<readonly [Flight, AvailableDate]>> =>
  Either.gen(function*() {
    const out: Array<readonly [Flight, AvailableDate]> = []
    for (const [, value] of World.entries(ctx.world, "flights")) {
      const flight = value as unknown as Flight
      if (origin !== null && flight.origin !== origin) continue
      if (destination !== null && flight.destination !== destination) continue
      const instance = lookup(flight.dates, yield* asKey(date))
      if (instance === undefined || !isAvailable(instance)) continue
      if (leaveAfter !== undefined && flight.scheduled_departure_time_est < leaveAfter) continue
      out.push([flight, instance])
    }
    return out
  })

/** Python's `int()` of a short string (the day of a date), or undefined when Python raises. */
const pyInt = (s: string): number | undefined => {
  const t = s.trim()
  return /^[+-]?\d+$/.test(t) ? Number(t) : undefined
}

/** Whether the top-level `amount` of the call's JSON text is a float literal (`100.0`), as Python would receive it. */
const amountIsFloat = (argumentsText: string | undefined): boolean => {
  if (argumentsText === undefined) return false
  type Marked = null | boolean | string | number | Array<Marked> | Map<string, Marked> | { readonly float: number }
  const parsed = parseJsonWith<Marked>(argumentsText, {
    object: (entries) => new Map(entries),
    number: (literal, isFloat) => (isFloat ? { float: Number(literal) } : Number(literal))
  })
  if (Either.isLeft(parsed) || !(parsed.right instanceof Map)) return false
  const amount = parsed.right.get("amount")
  return amount !== null && typeof amount === "object" && !Array.isArray(amount) && !(amount instanceof Map)
}

const AIRPORTS: ReadonlyArray<readonly [string, string]> = [
  ["SFO", "San Francisco"],
  ["JFK", "New York"],
  ["LAX", "Los Angeles"],
  ["ORD", "Chicago"],
  ["DFW", "Dallas"],
  ["DEN", "Denver"],
  ["SEA", "Seattle"],
  ["ATL", "Atlanta"],
  ["MIA", "Miami"],
  ["BOS", "Boston"],
  ["PHX", "Phoenix"],
  ["IAH", "Houston"],
  ["LAS", "Las Vegas"],
  ["MCO", "Orlando"],
  ["EWR", "Newark"],
  ["CLT", "Charlotte"],
  ["MSP", "Minneapolis"],
  ["DTW", "Detroit"],
  ["PHL", "Philadelphia"],
  ["LGA", "LaGuardia"]
]

// -- the tools -------------------------------------------------------------------------------------

const implementations: Record<string, Implementation> = {
  book_reservation: {
    params: ["user_id", "origin", "destination", "flight_type", "cabin", "flights", "passengers", "payment_methods", "total_baggages", "nonfree_baggages", "insurance"],
    run: (ctx, a) =>
      Either.gen(function*() {
        const flightsIn = yield* convert<FlightInfo>(a["flights"], "FlightInfo", flightInfoFields)
        const passengersIn = yield* convert<Passenger>(a["passengers"], "Passenger", passengerFields)
        const paymentsIn = yield* convert<Payment>(a["payment_methods"], "Payment", paymentFields)
        const user = yield* getUser(ctx, a["user_id"])
        const reservationId = NEW_RESERVATION_IDS.find((id) => read(ctx, "reservations", id) === undefined)
        if (reservationId === undefined) return yield* raise("Too many reservations")
        // Reservation(...), validated as pydantic does: unconverted passenger or payment lists fail here.
        const validated = validateModel(
          "Reservation",
          [
            ["user_id", str],
            ["origin", str],
            ["destination", str],
            ["flight_type", literal("round_trip", "one_way")],
            ["cabin", literal("business", "economy", "basic_economy")],
            ["passengers", models("Passenger", passengerFields)],
            ["payment_history", models("Payment", paymentFields)],
            ["total_baggages", int],
            ["nonfree_baggages", int],
            ["insurance", literal("yes", "no")]
          ],
          {
            ...a,
            passengers: "models" in passengersIn ? (passengersIn.models as unknown as Canonical.Json) : passengersIn.raw,
            payment_history: "models" in paymentsIn ? (paymentsIn.models as unknown as Canonical.Json) : paymentsIn.raw
          }
        )
        if (!validated.ok) return yield* raise(validated.message)
        const v = validated.value
        const passengers = v["passengers"] as unknown as ReadonlyArray<Passenger>
        const payments = v["payment_history"] as unknown as ReadonlyArray<Payment>
        if ("raw" in flightsIn) return yield* raise(attributeError(flightsIn.raw, "flight_number"))
        const flights = flightsIn.models
        const cabin = v["cabin"] as string
        const n = passengers.length

        let total = 0
        const reservationFlights: Array<ReservationFlight> = []
        const booked: Array<readonly [string, string]> = []
        for (const info of flights) {
          const flight = yield* getFlight(ctx, info.flight_number)
          const instance = yield* getFlightInstance(ctx, info.flight_number, info.date)
          if (!isAvailable(instance)) return yield* raise(`Flight ${info.flight_number} not available on date ${info.date}`)
          if ((yield* cabinValue(instance.available_seats, cabin)) < n) return yield* raise(`Not enough seats on flight ${info.flight_number}`)
          const price = yield* cabinValue(instance.prices, cabin)
          reservationFlights.push({ flight_number: info.flight_number, origin: flight.origin, destination: flight.destination, date: info.date, price })
          booked.push([info.flight_number, info.date])
          total += price * n
        }
        if (v["insurance"] === "yes") total += 30 * n
        // The argument as given (the validated copy is the reservation's): a string cannot be added.
        if (typeof a["nonfree_baggages"] === "string") return yield* raise("unsupported operand type(s) for +=: 'int' and 'str'")
        total += 50 * (v["nonfree_baggages"] as number)

        for (const payment of payments) {
          const method = lookup(user.payment_methods, payment.payment_id)
          if (method === undefined) return yield* raise(`Payment method ${payment.payment_id} not found`)
          if (method.source !== "credit_card" && method.amount < payment.amount) {
            return yield* raise(`Not enough balance in payment method ${payment.payment_id}`)
          }
        }
        const paid = payments.reduce((s, p) => s + p.amount, 0)
        if (paid !== total) return yield* raise(`Payment amount does not add up, total price is ${total}, but paid ${paid}`)

        // The checks passed: pay. A certificate is removed whole; the same one twice is a KeyError
        // after the earlier entries have been paid (upstream keeps those changes).
        for (const payment of payments) {
          const current = read<User>(ctx, "users", user.user_id)!
          const method = lookup(current.payment_methods, payment.payment_id)
          if (method === undefined) return yield* raise(pyRepr(payment.payment_id))
          if (method.source === "gift_card") setAmount(ctx, user.user_id, payment.payment_id, method.amount - payment.amount)
          else if (method.source === "certificate") {
            const { [payment.payment_id]: _, ...rest } = current.payment_methods
            put(ctx, "users", user.user_id, { ...current, payment_methods: rest })
          }
        }

        // Seats: once per flight listed (a flight listed twice loses its seats twice).
        for (const [flightNumber, date] of booked) {
          const flight = read<Flight>(ctx, "flights", flightNumber)!
          const instance = flight.dates[date] as AvailableDate
          const seats = { ...instance.available_seats, [cabin]: instance.available_seats[cabin]! - n }
          put(ctx, "flights", flightNumber, { ...flight, dates: { ...flight.dates, [date]: { ...instance, available_seats: seats } } })
        }
        const reservation: Reservation = {
          reservation_id: reservationId,
          user_id: v["user_id"] as string,
          origin: v["origin"] as string,
          destination: v["destination"] as string,
          flight_type: v["flight_type"] as Reservation["flight_type"],
          cabin,
          flights: reservationFlights,
          passengers: [...passengers],
          payment_history: [...payments],
          created_at: NOW,
          total_baggages: v["total_baggages"] as number,
          nonfree_baggages: v["nonfree_baggages"] as number,
          insurance: v["insurance"] as Reservation["insurance"],
          status: null
        }
        put(ctx, "reservations", reservationId, reservation)
        const owner = read<User>(ctx, "users", user.user_id)!
        put(ctx, "users", user.user_id, { ...owner, reservations: [...owner.reservations, reservationId] })
        return modelText(dumpReservation(reservation))
      })
  },

  calculate: calculateTool,

  cancel_reservation: {
    params: ["reservation_id"],
    run: (ctx, a) =>
      Either.gen(function*() {
        const reservation = yield* getReservation(ctx, a["reservation_id"])
        // Every entry is reversed, refunds included; no balance is credited and no seat released.
        const refunds = reservation.payment_history.map((p) => ({ payment_id: p.payment_id, amount: 0 - p.amount }))
        const updated: Reservation = { ...reservation, payment_history: [...reservation.payment_history, ...refunds], status: "cancelled" }
        put(ctx, "reservations", reservation.reservation_id, updated)
        return modelText(dumpReservation(updated))
      })
  },

  get_reservation_details: {
    params: ["reservation_id"],
    run: (ctx, a) => Either.map(getReservation(ctx, a["reservation_id"]), (r) => modelText(dumpReservation(r)))
  },

  get_user_details: {
    params: ["user_id"],
    run: (ctx, a) => Either.map(getUser(ctx, a["user_id"]), (u) => modelText(dumpUser(u)))
  },

  list_all_airports: {
    params: [],
    run: () => Either.right(modelText(AIRPORTS.map(([iata, city]) => dict([["iata", iata], ["city", city]]))))
  },

  search_direct_flight: {
    params: ["origin", "destination", "date"],
    run: (ctx, a) =>
      Either.map(searchDirect(ctx, a["date"], a["origin"], a["destination"]), (found) =>
        modelText(found.map(([flight, instance]) => directFlight(flight, instance, null))))
  },

  search_onestop_flight: {
    params: ["origin", "destination", "date"],
    run: (ctx, a) =>
      Either.gen(function*() {
        const date = a["date"]
        const results: Array<PyValue> = []
        for (const [first, firstInstance] of yield* searchDirect(ctx, date, a["origin"], null)) {
          // Only reached for a date some flight has, so `date` is a "2024-05-DD" string here.
          const day = pyInt(String(date).slice(-2))
          if (day === undefined) return yield* raise(`invalid literal for int() with base 10: ${pyRepr(String(date).slice(-2))}`)
          // An overnight first leg connects on the next day: same month, no zero padding.
          const date2 = first.scheduled_arrival_time_est.includes("+1") ? `2024-05-${day + 1}` : (date as string)
          for (const [second, secondInstance] of yield* searchDirect(ctx, date2, first.destination, a["destination"], first.scheduled_arrival_time_est)) {
            results.push([directFlight(first, firstInstance, date as string), directFlight(second, secondInstance, date2)])
          }
        }
        return modelText(results)
      })
  },

  send_certificate: {
    params: ["user_id", "amount"],
    run: (ctx, a, argumentsText) =>
      Either.gen(function*() {
        const user = yield* getUser(ctx, a["user_id"])
        const id = NEW_CERTIFICATE_IDS.find((c) => !Object.hasOwn(user.payment_methods, c))
        if (id === undefined) return yield* raise("Too many certificates")
        const validated = validateModel("Certificate", [["amount", floatField]], a)
        if (!validated.ok) return yield* raise(validated.message)
        const amount = validated.value["amount"] as number
        put(ctx, "users", user.user_id, { ...user, payment_methods: { ...user.payment_methods, [id]: { source: "certificate", id, amount } } })
        // The message prints the argument as Python received it (`100`, `100.0`, `'100'` prints as 100).
        const raw = a["amount"]
        const shown = typeof raw === "number" && (amountIsFloat(argumentsText) || !Number.isInteger(raw)) ? reprFloat(raw) : pyStr(raw)
        return `Certificate ${id} added to user ${pyStr(a["user_id"])} with amount ${shown}.`
      })
  },

  transfer_to_human_agents: {
    params: ["summary"],
    run: () => Either.right("Transfer successful")
  },

  update_reservation_baggages: {
    params: ["reservation_id", "total_baggages", "nonfree_baggages", "payment_id"],
    run: (ctx, a) =>
      Either.gen(function*() {
        const reservation = yield* getReservation(ctx, a["reservation_id"])
        const user = yield* getUser(ctx, reservation.user_id)
        const nonfree = yield* numeric(a["nonfree_baggages"], "-", "left")
        const total = 50 * Math.max(0, nonfree - reservation.nonfree_baggages)
        const payment = yield* paymentForUpdate(ctx, user, a["payment_id"], total)
        // Both counts are stored as given, unvalidated.
        const updated: Reservation = {
          ...reservation,
          payment_history: payment === null ? reservation.payment_history : [...reservation.payment_history, payment],
          total_baggages: a["total_baggages"] as number,
          nonfree_baggages: a["nonfree_baggages"] as number
        }
        put(ctx, "reservations", reservation.reservation_id, updated)
        return modelText(dumpReservation(updated))
      })
  },

  update_reservation_flights: {
    params: ["reservation_id", "cabin", "flights", "payment_id"],
    run: (ctx, a) =>
      Either.gen(function*() {
        const infosIn = yield* convert<FlightInfo>(a["flights"], "FlightInfo", flightInfoFields)
        const reservation = yield* getReservation(ctx, a["reservation_id"])
        const user = yield* getUser(ctx, reservation.user_id)
        const cabin = a["cabin"]
        const n = yield* pyLen(reservation.passengers as unknown as Canonical.Json)
        if ("raw" in infosIn && iterate(infosIn.raw)!.length > 0) return yield* raise(attributeError(infosIn.raw, "flight_number"))
        const infos = "models" in infosIn ? infosIn.models : []
        let total = 0
        const flights: Array<ReservationFlight> = []
        for (const info of infos) {
          // A flight already in the reservation, in the same cabin, is kept at the price paid.
          const kept = cabin === reservation.cabin
            ? reservation.flights.find((f) => f.flight_number === info.flight_number && f.date === info.date)
            : undefined
          if (kept !== undefined) {
            total += kept.price * n
            flights.push(kept)
            continue
          }
          const flight = yield* getFlight(ctx, info.flight_number)
          const instance = yield* getFlightInstance(ctx, info.flight_number, info.date)
          if (!isAvailable(instance)) return yield* raise(`Flight ${info.flight_number} not available on date ${info.date}`)
          if ((yield* cabinValue(instance.available_seats, cabin)) < n) return yield* raise(`Not enough seats on flight ${info.flight_number}`)
          const price = yield* cabinValue(instance.prices, cabin)
          flights.push({ flight_number: info.flight_number, origin: flight.origin, destination: flight.destination, date: info.date, price })
          total += price * n
        }
        total -= reservation.flights.reduce((s, f) => s + f.price, 0) * n
        const payment = yield* paymentForUpdate(ctx, user, a["payment_id"], total)
        // No seat changes; the cabin is assigned unvalidated (any string is stored).
        const updated: Reservation = {
          ...reservation,
          payment_history: payment === null ? reservation.payment_history : [...reservation.payment_history, payment],
          flights,
          cabin: cabin as string
        }
        put(ctx, "reservations", reservation.reservation_id, updated)
        return modelText(dumpReservation(updated))
      })
  },

  update_reservation_passengers: {
    params: ["reservation_id", "passengers"],
    run: (ctx, a) =>
      Either.gen(function*() {
        const passengersIn = yield* convert<Passenger>(a["passengers"], "Passenger", passengerFields)
        const reservation = yield* getReservation(ctx, a["reservation_id"])
        // Unconverted passengers (some element not a dict) are counted and stored as given.
        const passengers = "models" in passengersIn ? (passengersIn.models as unknown as Canonical.Json) : passengersIn.raw
        if ((yield* pyLen(passengers)) !== (yield* pyLen(reservation.passengers as unknown as Canonical.Json))) {
          return yield* raise("Number of passengers does not match")
        }
        const updated: Reservation = { ...reservation, passengers: passengers as unknown as ReadonlyArray<Passenger> }
        put(ctx, "reservations", reservation.reservation_id, updated)
        return modelText(dumpReservation(updated))
      })
  },

  get_flight_status: {
    params: ["flight_number", "date"],
    // The bare status string, not JSON.
    run: (ctx, a) => Either.map(getFlightInstance(ctx, a["flight_number"], a["date"]), (d) => d.status)
  }
}

/** Upstream's toolkit order (tools.json). */
export const airlineToolNames: ReadonlyArray<string> = Object.keys(implementations)

/**
 * Call an airline tool by name as upstream's `Environment.get_response` does: unknown names,
 * argument binding errors and exceptions all come back as `Error: ...` with `error: true`.
 */
export const callAirlineTool = (world: World.World, name: string, args: Args, argumentsText?: string): Tool.ToolOutcome =>
  callToolkit("AirlineTools", implementations, world, name, args, argumentsText)

export type { ToolType }

/**
 * The airline tools as `Tool`s, in the order and with the specs of tools.json; access from
 * tools-types.json (`write` for write tools, `read` for read and generic tools).
 */
export const makeAirlineTools = (
  specs: ReadonlyArray<Tool.ToolSpec>,
  types: ReadonlyArray<{ readonly name: string; readonly type: ToolType }>
): ReadonlyArray<Tool.Tool> => toolsOf(specs, types, callAirlineTool)

/** Apply a call's writes: the world after the call (failed calls included, as upstream). */
export const step = (world: World.World, name: string, args: Args): readonly [World.World, Tool.ToolOutcome] => applyCall(world, callAirlineTool(world, name, args))
