import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type { Json } from "../../../../src/content/Canonical.ts"
import * as World from "../../../../src/world/World.ts"
import { type AirlineData, loadAirlineData } from "../../../../providers/tau2/airline/data.ts"
import type { Flight, Reservation, User } from "../../../../providers/tau2/airline/model.ts"
import { airlineToolNames, callAirlineTool, makeAirlineTools, step } from "../../../../providers/tau2/airline/tools.ts"

let data: AirlineData

beforeAll(async () => {
  data = await Effect.runPromise(loadAirlineData())
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

const user = (world: World.World, id: string) => World.get(world, "users", id) as unknown as User
const reservation = (world: World.World, id: string) => World.get(world, "reservations", id) as unknown as Reservation
const seats = (world: World.World, flight: string, date: string) =>
  ((World.get(world, "flights", flight) as unknown as Flight).dates[date] as { available_seats: Record<string, number> }).available_seats

// Fixtures are records of the pinned db.json: raj_sanchez_7340 holds gift cards of 163, 50 and 57
// and certificate_4594761 (150); HAT001 PHL-LGA on 2024-05-20 costs 137 in economy (17 seats).
const booking = (payments: ReadonlyArray<{ payment_id: string; amount: number }>, flights = [{ flight_number: "HAT001", date: "2024-05-20" }]) =>
  [
    "book_reservation",
    {
      user_id: "raj_sanchez_7340", origin: "PHL", destination: "LGA", flight_type: "one_way", cabin: "economy",
      flights, passengers: [{ first_name: "Raj", last_name: "Sanchez", dob: "1965-09-13" }],
      payment_methods: payments, total_baggages: 0, nonfree_baggages: 0, insurance: "no"
    }
  ] as const

describe("airline tools: surprising behaviours kept from upstream", () => {
  it("a booking pays, takes seats, is stored as HATHAT and answers the reservation in pydantic field order", () => {
    const { outcomes, world } = run(booking([{ payment_id: "gift_card_4964153", amount: 137 }]))
    expect(outcomes[0]!.error).toBe(false)
    expect(outcomes[0]!.output).toBe(
      '{"reservation_id": "HATHAT", "user_id": "raj_sanchez_7340", "origin": "PHL", "destination": "LGA", "flight_type": "one_way", ' +
        '"cabin": "economy", "flights": [{"flight_number": "HAT001", "origin": "PHL", "destination": "LGA", "date": "2024-05-20", "price": 137}], ' +
        '"passengers": [{"first_name": "Raj", "last_name": "Sanchez", "dob": "1965-09-13"}], "payment_history": [{"payment_id": "gift_card_4964153", "amount": 137}], ' +
        '"created_at": "2024-05-15T15:00:00", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no", "status": null}'
    )
    expect(seats(world, "HAT001", "2024-05-20").economy).toBe(16)
    expect(user(world, "raj_sanchez_7340").payment_methods["gift_card_4964153"]).toMatchObject({ amount: 26 })
    expect(user(world, "raj_sanchez_7340").reservations.at(-1)).toBe("HATHAT")
    // Gift-card amounts are Python floats in what the agent reads.
    const details = callAirlineTool(world, "get_user_details", { user_id: "raj_sanchez_7340" }).output
    expect(details).toContain('"gift_card_4964153": {"source": "gift_card", "id": "gift_card_4964153", "amount": 26.0}')
  })

  it("the same certificate twice fails with a KeyError after the certificate is spent; nothing is booked", () => {
    const { outcomes, world } = run(booking([{ payment_id: "certificate_4594761", amount: 100 }, { payment_id: "certificate_4594761", amount: 37 }]))
    expect(outcomes[0]).toMatchObject({ output: "Error: 'certificate_4594761'", error: true })
    expect(user(world, "raj_sanchez_7340").payment_methods["certificate_4594761"]).toBeUndefined()
    expect(World.has(world, "reservations", "HATHAT")).toBe(false)
    expect(seats(world, "HAT001", "2024-05-20").economy).toBe(17)
  })

  it("checks each payment entry alone against the full balance, then the total, before changing anything", () => {
    const over = run(booking([{ payment_id: "gift_card_3226531", amount: 137 }]))
    expect(over.outcomes[0]!.output).toBe("Error: Not enough balance in payment method gift_card_3226531")
    const wrong = run(booking([{ payment_id: "credit_card_7891819", amount: 100 }]))
    expect(wrong.outcomes[0]!.output).toBe("Error: Payment amount does not add up, total price is 137, but paid 100")
    expect(wrong.world).toBe(data.initialWorld)
    // The same flight twice is charged twice and loses its seats twice.
    const twice = run(booking([{ payment_id: "credit_card_7891819", amount: 274 }], [{ flight_number: "HAT001", date: "2024-05-20" }, { flight_number: "HAT001", date: "2024-05-20" }]))
    expect(twice.outcomes[0]!.error).toBe(false)
    expect(seats(twice.world, "HAT001", "2024-05-20").economy).toBe(15)
  })

  it("a fourth booking is refused: only HATHAT, HATHAU and HATHAV are ever given", () => {
    const card = [{ payment_id: "credit_card_7891819", amount: 137 }]
    const { outcomes } = run(booking(card), booking(card), booking(card), booking(card))
    expect(outcomes.map((o) => o.error)).toEqual([false, false, false, true])
    expect(outcomes[3]!.output).toBe("Error: Too many reservations")
  })

  it("cancelling reverses every payment entry, refunds included, releases no seat and can be repeated", () => {
    const { outcomes, world } = run(["cancel_reservation", { reservation_id: "Q69X3R" }], ["cancel_reservation", { reservation_id: "Q69X3R" }])
    expect(outcomes[1]!.output).toContain('"payment_history": [{"payment_id": "gift_card_3226531", "amount": 430}, {"payment_id": "gift_card_3226531", "amount": -430}, {"payment_id": "gift_card_3226531", "amount": -430}, {"payment_id": "gift_card_3226531", "amount": 430}]')
    expect(reservation(world, "Q69X3R").status).toBe("cancelled")
    expect(user(world, "raj_sanchez_7340").payment_methods["gift_card_3226531"]).toMatchObject({ amount: 50 })
  })

  it("a downgrade paid to a gift card appends a negative payment and credits the card", () => {
    // MZDDS4: business, 3 passengers, flights at 1305 + 1126 + 1746, paid with gift_card_4964153.
    const flights = reservation(data.initialWorld, "MZDDS4").flights.map((f) => ({ flight_number: f.flight_number, date: f.date }))
    const { outcomes, world } = run(["update_reservation_flights", { reservation_id: "MZDDS4", cabin: "basic_economy", flights, payment_id: "gift_card_4964153" }])
    expect(outcomes[0]!.error).toBe(false)
    const r = reservation(world, "MZDDS4")
    const total = r.flights.reduce((s, f) => s + f.price, 0) * 3 - (1305 + 1126 + 1746) * 3
    expect(total).toBeLessThan(0)
    expect(r.payment_history.at(-1)).toEqual({ payment_id: "gift_card_4964153", amount: total })
    expect(user(world, "raj_sanchez_7340").payment_methods["gift_card_4964153"]).toMatchObject({ amount: 163 - total })
    expect(r.cabin).toBe("basic_economy")
  })

  it("an unknown cabin is stored when no flight needs pricing, and is a KeyError when one does", () => {
    const { outcomes, world } = run(
      ["update_reservation_flights", { reservation_id: "Q69X3R", cabin: "first", flights: [], payment_id: "credit_card_7891819" }],
      ["update_reservation_flights", { reservation_id: "Q69X3R", cabin: "Economy", flights: [{ flight_number: "HAT001", date: "2024-05-20" }], payment_id: "credit_card_7891819" }]
    )
    expect(outcomes[0]!.output).toContain('"cabin": "first", "flights": [], ')
    expect(outcomes[0]!.output).toContain('{"payment_id": "credit_card_7891819", "amount": -430}')
    expect(outcomes[1]).toMatchObject({ output: "Error: 'Economy'", error: true })
    expect(reservation(world, "Q69X3R").cabin).toBe("first")
  })

  it("the payment method of an update is checked even for a price of 0: a certificate always fails", () => {
    const { outcomes } = run(
      ["update_reservation_baggages", { reservation_id: "Q69X3R", total_baggages: 0, nonfree_baggages: 0, payment_id: "certificate_4594761" }],
      ["update_reservation_baggages", { reservation_id: "Q69X3R", total_baggages: 2, nonfree_baggages: 1, payment_id: "gift_card_3226531" }],
      ["update_reservation_baggages", { reservation_id: "Q69X3R", total_baggages: -1, nonfree_baggages: -2, payment_id: "nope" }]
    )
    expect(outcomes[0]!.output).toBe("Error: Certificate cannot be used to update reservation")
    expect(outcomes[1]!.output).toContain('{"payment_id": "gift_card_3226531", "amount": 50}], "created_at": "2024-05-14T09:52:38", "total_baggages": 2, "nonfree_baggages": 1')
    expect(outcomes[2]!.output).toBe("Error: Payment method not found")
  })

  it("one-stop searches connect an overnight first leg on the next day, compared as strings", () => {
    // HAT002 LGA-PHX leaves 21:00:00 and arrives 01:30:00+1.
    const out = callAirlineTool(data.initialWorld, "search_onestop_flight", { origin: "LGA", destination: "SFO", date: "2024-05-20" })
    const pairs = JSON.parse(out.output) as ReadonlyArray<readonly [{ flight_number: string; date: string }, { date: string; scheduled_departure_time_est: string }]>
    const overnight = pairs.filter(([first]) => first.flight_number === "HAT002")
    for (const [first, second] of overnight) {
      expect(first.date).toBe("2024-05-20")
      expect(second.date).toBe("2024-05-21")
      expect(second.scheduled_departure_time_est >= "01:30:00+1").toBe(true)
    }
    // From the 30th an overnight leg connects on "2024-05-31", which has no flights.
    const last = JSON.parse(callAirlineTool(data.initialWorld, "search_onestop_flight", { origin: "LGA", destination: "SFO", date: "2024-05-30" }).output) as ReadonlyArray<unknown>
    expect(last.some((p) => JSON.stringify(p).includes("2024-05-31"))).toBe(false)
    const direct = callAirlineTool(data.initialWorld, "search_direct_flight", { origin: "PHL", destination: "LGA", date: "2024-05-20" }).output
    expect(direct.startsWith('[{"flight_number": "HAT001", "origin": "PHL", "destination": "LGA", "status": "available", "scheduled_departure_time_est": "06:00:00", "scheduled_arrival_time_est": "07:00:00", "date": null, ')).toBe(true)
  })

  it("certificates go last under fixed ids, three at most; the message prints the amount as given", () => {
    const send = (amount: number): Call => ["send_certificate", { user_id: "raj_sanchez_7340", amount }]
    const { outcomes, world } = run(send(100), send(0), send(-5), send(1))
    expect(outcomes[0]!.output).toBe("Certificate certificate_3221322 added to user raj_sanchez_7340 with amount 100.")
    expect(outcomes[3]!.output).toBe("Error: Too many certificates")
    expect(Object.keys(user(world, "raj_sanchez_7340").payment_methods).slice(-3)).toEqual(["certificate_3221322", "certificate_3221323", "certificate_3221324"])
    const details = callAirlineTool(world, "get_user_details", { user_id: "raj_sanchez_7340" }).output
    expect(details).toContain('"certificate_3221324": {"source": "certificate", "id": "certificate_3221324", "amount": -5.0}')
    // A float literal stays a float in the message, as Python receives it.
    const tool = makeAirlineTools(data.toolSpecs, data.toolTypes).find((t) => t.spec.name === "send_certificate")!
    expect(tool.run(data.initialWorld, { user_id: "raj_sanchez_7340", amount: 100 }, '{"user_id": "raj_sanchez_7340", "amount": 100.0}').output).toBe(
      "Certificate certificate_3221322 added to user raj_sanchez_7340 with amount 100.0."
    )
  })

  it("answers the bare status string, raw error texts and unknown tools as upstream", () => {
    expect(callAirlineTool(data.initialWorld, "get_flight_status", { flight_number: "HAT001", date: "2024-05-20" })).toEqual({ output: "available", error: false, writes: [] })
    expect(callAirlineTool(data.initialWorld, "get_flight_status", { flight_number: "HAT001", date: "2024-06-01" }).output).toBe("Error: Flight HAT001 not found on date 2024-06-01")
    expect(callAirlineTool(data.initialWorld, "get_user_details", { user_id: "café\n" }).output).toBe("Error: User café\n not found")
    expect(callAirlineTool(data.initialWorld, "think", { thought: "x" }).output).toBe("Error: Tool 'think' not found.")
    expect(callAirlineTool(data.initialWorld, "calculate", { expression: "2 + 2" }).output).toBe("4.0")
    expect(callAirlineTool(data.initialWorld, "update_reservation_passengers", { reservation_id: "Q69X3R", passengers: [] }).output).toBe("Error: Number of passengers does not match")
  })

  it("answers ill-shaped calls with Python's binding texts and pydantic's validation texts", () => {
    expect(callAirlineTool(data.initialWorld, "get_reservation_details", { reservation_id: "Q69X3R", x: 1 }).output).toBe(
      "Error: AirlineTools.get_reservation_details() got an unexpected keyword argument 'x'"
    )
    expect(callAirlineTool(data.initialWorld, "search_direct_flight", { origin: "PHL" }).output).toBe(
      "Error: AirlineTools.search_direct_flight() missing 2 required positional arguments: 'destination' and 'date'"
    )
    const [, args] = booking([{ payment_id: "credit_card_7891819", amount: 137 }])
    expect(callAirlineTool(data.initialWorld, "book_reservation", { ...args, cabin: "Economy" }).output).toBe(
      "Error: 1 validation error for Reservation\ncabin\n  Input should be 'business', 'economy' or 'basic_economy' [type=literal_error, input_value='Economy', input_type=str]\n" +
        "    For further information visit https://errors.pydantic.dev/2.13/v/literal_error"
    )
    expect(callAirlineTool(data.initialWorld, "book_reservation", { ...args, flights: [{ flight_number: "HAT001" }] }).output).toBe(
      "Error: 1 validation error for FlightInfo\ndate\n  Field required [type=missing, input_value={'flight_number': 'HAT001'}, input_type=dict]\n" +
        "    For further information visit https://errors.pydantic.dev/2.13/v/missing"
    )
  })

  it("goes on with lists it could not convert and stores counts as given, as upstream's unvalidated assignments do", () => {
    const { outcomes } = run(
      ["update_reservation_passengers", { reservation_id: "Q69X3R", passengers: ["x"] }],
      ["update_reservation_baggages", { reservation_id: "Q69X3R", total_baggages: 2.5, nonfree_baggages: 0, payment_id: "credit_card_7891819" }],
      ["update_reservation_flights", { reservation_id: "Q69X3R", cabin: "economy", flights: [{ flight_number: "HAT001", date: "2024-05-20" }, "x"], payment_id: "credit_card_7891819" }],
      ["send_certificate", { user_id: "raj_sanchez_7340", amount: "1_0" }]
    )
    expect(outcomes[0]!.output).toContain('"passengers": ["x"], ')
    expect(outcomes[1]!.output).toContain('"total_baggages": 2.5, "nonfree_baggages": 0, ')
    expect(outcomes[2]!.output).toBe("Error: 'dict' object has no attribute 'flight_number'")
    // pydantic reads "1_0" as 10.0; the message prints the argument.
    expect(outcomes[3]!.output).toBe("Certificate certificate_3221322 added to user raj_sanchez_7340 with amount 1_0.")
  })

  it("offers the 14 tools of tools.json with read/write access from tools-types.json; failed calls other than the KeyError write nothing", () => {
    const tools = makeAirlineTools(data.toolSpecs, data.toolTypes)
    expect(tools.map((t) => t.spec.name)).toEqual(airlineToolNames)
    expect(tools.filter((t) => t.access === "write").map((t) => t.spec.name)).toEqual([
      "book_reservation", "cancel_reservation", "send_certificate", "update_reservation_baggages", "update_reservation_flights", "update_reservation_passengers"
    ])
    expect(callAirlineTool(data.initialWorld, "cancel_reservation", { reservation_id: "" })).toEqual({ output: "Error: Reservation  not found", error: true, writes: [] })
    const outcome = callAirlineTool(data.initialWorld, "cancel_reservation", { reservation_id: "Q69X3R" })
    expect(outcome.writes.map((w) => `${w.table}/${w.key}`)).toEqual(["reservations/Q69X3R"])
  })
})
