/**
 * TravelAPI: an access token, credit cards, bookings and a budget limit. Tokens, card ids,
 * balances, booking, transaction and insurance ids are drawn from the instance's `random.Random`.
 * Long-context tasks add upstream's extension cards and bookings at load.
 *
 * Upstream caches the last flight cost privately and `book_flight` reads it right after computing
 * it; the cost is the same value either way, so no cache is kept here.
 */
import { type Api, dict, getOr, type LongContext, mutating, query } from "./api.ts"
import { strptime } from "./datetime.ts"
import {
  asStr,
  float,
  noAttribute,
  type Py,
  pyAdd,
  pyCompare,
  PyDict,
  pyEq,
  PyError,
  pyIn,
  pyIter,
  pyMul,
  pyRepr,
  PySet,
  pyStr,
  pySub,
  pyTrueDiv,
  PyTuple,
  toFloat,
  typeError,
  typeName
} from "./py.ts"
import { PyRandom } from "./random.ts"
import { roundFloat } from "./math.ts"

export interface TravelState {
  readonly credit_card_list: Py
  readonly booking_record: Py
  readonly access_token: Py
  readonly token_type: Py
  readonly token_expires_in: Py
  readonly token_scope: Py
  readonly user_first_name: Py
  readonly user_last_name: Py
  readonly budget_limit: Py
  readonly long_context: boolean
  /** Ids of the cards that are upstream's shared extension objects (see `shareBack`). */
  readonly sharedCards: ReadonlyArray<Py>
  readonly random: PyRandom
}

const ROUTES =
  "SFO-LAX:200 SFO-JFK:500 SFO-ORD:400 SFO-BOS:450 SFO-RMS:300 SFO-SBK:350 SFO-MPC:370 SFO-SVP:320 SFO-SHD:330 " +
  "SFO-SSV:340 SFO-OKD:360 SFO-WLB:310 SFO-CRH:380 SFO-ATV:390 SFO-PHV:420 SFO-GFD:430 SFO-CIA:700 LAX-SFO:100 " +
  "LAX-JFK:600 LAX-ORD:500 LAX-BOS:550 LAX-RMS:310 LAX-SBK:320 LAX-MPC:330 LAX-SVP:340 LAX-SHD:350 LAX-SSV:360 " +
  "LAX-OKD:370 LAX-WLB:380 LAX-CRH:390 LAX-ATV:400 LAX-PHV:410 LAX-GFD:420 LAX-HND:430 JFK-ORD:300 JFK-BOS:250 " +
  "JFK-RMS:450 JFK-SBK:460 JFK-MPC:470 JFK-SVP:480 JFK-SHD:490 JFK-SSV:500 JFK-OKD:510 JFK-WLB:520 JFK-CRH:530 " +
  "JFK-ATV:540 JFK-PHV:550 JFK-GFD:560 JFK-LAX:570 JFK-HND:800 JFK-PVG:950 JFK-PEK:1000 ORD-LAX:180 ORD-BOS:200 " +
  "ORD-RMS:350 ORD-SBK:360 ORD-MPC:370 ORD-SVP:380 ORD-SHD:390 ORD-SSV:400 ORD-OKD:410 ORD-WLB:420 ORD-CRH:430 " +
  "ORD-ATV:440 ORD-PHV:450 ORD-GFD:460 BOS-RMS:400 BOS-SBK:410 BOS-MPC:420 BOS-SVP:430 BOS-SHD:440 BOS-SSV:450 " +
  "BOS-OKD:460 BOS-WLB:470 BOS-CRH:480 BOS-ATV:490 BOS-PHV:500 BOS-GFD:510 RMS-BOS:200 RMS-JFK:210 RMS-SBK:220 " +
  "RMS-MPC:230 RMS-SVP:240 RMS-SHD:250 RMS-SSV:260 RMS-OKD:270 RMS-WLB:280 RMS-CRH:290 RMS-ATV:300 RMS-PHV:310 " +
  "RMS-GFD:320 RMS-LAX:330 SBK-MPC:200 SBK-SVP:210 SBK-SHD:220 SBK-SSV:230 SBK-OKD:240 SBK-WLB:250 SBK-CRH:260 " +
  "SBK-ATV:270 SBK-PHV:280 SBK-GFD:290 MPC-SVP:210 MPC-SHD:220 MPC-SSV:230 MPC-OKD:240 MPC-WLB:250 MPC-CRH:260 " +
  "MPC-ATV:270 MPC-PHV:280 MPC-GFD:290 SVP-SHD:230 SVP-SSV:240 SVP-OKD:250 SVP-WLB:260 SVP-CRH:270 SVP-ATV:280 " +
  "SVP-PHV:290 SVP-GFD:300 SHD-SSV:220 SHD-OKD:230 SHD-WLB:240 SHD-CRH:250 SHD-ATV:260 SHD-PHV:270 SHD-GFD:280 " +
  "SSV-OKD:240 SSV-WLB:250 SSV-CRH:260 SSV-ATV:270 SSV-PHV:280 SSV-GFD:290 OKD-WLB:230 OKD-CRH:240 OKD-ATV:250 " +
  "OKD-PHV:260 OKD-GFD:270 WLB-CRH:250 WLB-ATV:260 WLB-PHV:270 WLB-GFD:280 CRH-ATV:240 CRH-PHV:250 CRH-GFD:260 " +
  "CRH-SFO:270 CRH-RMS:280 CRH-HKG:290 CRH-JFK:300 ATV-PHV:230 ATV-GFD:240 PHV-GFD:220 LHR-CDG:100 OKD-LAX:220"

/** The route table, keyed by the `(from, to)` tuple as upstream's dict is. */
const baseCosts: PyDict = PyDict.of(
  ROUTES.split(" ").map((r) => {
    const [pair, cost] = r.split(":") as [string, string]
    const [from, to] = pair.split("-") as [string, string]
    return [new PyTuple([from, to]), Number(cost)] as const
  })
)

const AIRPORTS: ReadonlyArray<Py> = [
  "RMS", "SBK", "MPC", "SVP", "SHD", "CDG", "LHR", "SSV", "OKD", "WLB", "PEK", "HND", "HKG", "CIA", "CRH", "ATV", "PHV", "GFD", "SFO", "LAX", "JFK",
  "ORD", "BOS"
]

const airportByCity = PyDict.fromRecord({
  Rivermist: "RMS",
  Stonebrook: "SBK",
  Maplecrest: "MPC",
  Silverpine: "SVP",
  Shadowridge: "SHD",
  London: "LHR",
  Paris: "CDG",
  "Sunset Valley": "SSV",
  Oakendale: "OKD",
  Willowbend: "WLB",
  "Crescent Hollow": "CRH",
  Autumnville: "ATV",
  Pinehaven: "PHV",
  Greenfield: "GFD",
  "San Francisco": "SFO",
  "Los Angeles": "LAX",
  "New York": "JFK",
  Chicago: "ORD",
  Boston: "BOS",
  Beijing: "PEK",
  "Hong Kong": "HKG",
  Rome: "CIA",
  Tokyo: "HND"
})

const exchangeRates: ReadonlyArray<readonly [string, string, Py]> = [
  ["USD", "RMB", 7],
  ["USD", "EUR", float(0.8)],
  ["USD", "JPY", 110],
  ["USD", "GBP", float(0.7)],
  ["USD", "CAD", float(1.3)],
  ["USD", "AUD", float(1.4)],
  ["USD", "INR", 70],
  ["USD", "RUB", 60],
  ["USD", "BRL", float(3.8)],
  ["USD", "MXN", 20]
]

const asDict = (v: Py, attr: string): PyDict => {
  if (v instanceof PyDict) return v
  throw noAttribute(v, attr)
}

const item = (v: Py, k: Py): Py => {
  if (v instanceof PyDict) return v.item(k)
  if (typeof v === "string") throw typeError(`string indices must be integers, not '${typeName(k)}'`)
  throw typeError(`'${typeName(v)}' object is not subscriptable`)
}

/** `self.credit_card_list[card_id]["balance"] = f(balance)`. */
const updateBalance = (d: { credit_card_list: Py }, cardId: Py, f: (balance: Py) => Py): void => {
  const cards = asDict(d.credit_card_list, "__getitem__")
  const card = cards.item(cardId)
  d.credit_card_list = cards.set(cardId, asDict(card, "__setitem__").set("balance", f(item(card, "balance"))))
}

/** `get_flight_cost`: the cost list, and this route's cost. */
const flightCost = (s: TravelState, from: Py, to: Py, date: Py, travelClass: Py): { readonly list: Array<Py>; readonly cost: Py } => {
  const pair = new PyTuple([from, to])
  if (!baseCosts.has(pair)) throw new PyError("ValueError", "No available route for the given airports.")
  const factor = pyEq(travelClass, "economy") ? 1 : pyEq(travelClass, "business") ? 2 : pyEq(travelClass, "first") ? 5 : undefined
  if (factor === undefined) throw new PyError("ValueError", "Invalid travel class. Options are: economy, business, first.")
  let digitSum = 0
  for (const c of pyIter(date)) if (/^\d$/.test(asStr(c, "isdigit"))) digitSum += Number(c)
  const multiplier = digitSum % 2 === 0 ? 2 : 1
  const costOf = (base: Py) => float(toFloat(pyMul(pyMul(base, factor), multiplier)))
  const cost = costOf(baseCosts.item(pair))
  return { list: s.long_context ? baseCosts.values().map(costOf) : [cost], cost }
}

const tokenChecks = (s: TravelState, accessToken: Py, extra: Readonly<Record<string, Py>> = {}): PyDict | undefined => {
  if (pyEq(s.token_expires_in, 0)) return dict({ ...extra, error: "Token expired" })
  if (!pyEq(accessToken, s.access_token)) return dict({ ...extra, error: "Invalid access token" })
  return undefined
}

const draw = (d: { random: PyRandom }, lo: number, hi: number): number => {
  const draws = d.random.draws()
  const n = draws.randint(lo, hi)
  d.random = draws.done()
  return n
}

/** `_add_credit_cards` / `_add_booking_records`: the extension's entries the config lacks, and their keys. */
const withExtension = (base: Py, extension: Py): { readonly merged: Py; readonly added: Array<Py> } => {
  let d = asDict(base, "__setitem__")
  const added: Array<Py> = []
  for (const [k, v] of asDict(extension, "items").entries()) {
    if (!d.has(k)) {
      d = d.set(k, v)
      added.push(k)
    }
  }
  return { merged: d, added }
}

export const TravelAPI: Api<TravelState> = {
  name: "TravelAPI",
  load: (config, longContext: LongContext | undefined) => {
    const seed = getOr(config, "random_seed", 141053)
    const cards = getOr(config, "credit_card_list", PyDict.empty)
    const bookings = getOr(config, "booking_record", PyDict.empty)
    const withCards = longContext === undefined ? { merged: cards, added: [] } : withExtension(cards, longContext.get("CREDIT_CARD_EXTENSION") ?? PyDict.empty)
    return {
      credit_card_list: withCards.merged,
      sharedCards: withCards.added,
      booking_record: longContext === undefined ? bookings : withExtension(bookings, longContext.get("BOOKING_RECORD_EXTENSION") ?? PyDict.empty).merged,
      access_token: getOr(config, "access_token", null),
      token_type: getOr(config, "token_type", null),
      token_expires_in: getOr(config, "token_expires_in", null),
      token_scope: getOr(config, "token_scope", null),
      user_first_name: getOr(config, "user_first_name", null),
      user_last_name: getOr(config, "user_last_name", null),
      budget_limit: getOr(config, "budget_limit", null),
      long_context: longContext !== undefined,
      random: PyRandom.seeded(typeof seed === "number" ? seed : 141053)
    }
  },
  publicState: (s) => [
    ["credit_card_list", s.credit_card_list],
    ["booking_record", s.booking_record],
    ["access_token", s.access_token],
    ["token_type", s.token_type],
    ["token_expires_in", s.token_expires_in],
    ["token_scope", s.token_scope],
    ["user_first_name", s.user_first_name],
    ["user_last_name", s.user_last_name],
    ["budget_limit", s.budget_limit],
    ["long_context", s.long_context]
  ],
  methods: {
    authenticate_travel: mutating<TravelState>(
      ["client_id", "client_secret", "refresh_token", "grant_type", "user_first_name", "user_last_name"],
      (d, _id, _secret, _refresh, grantType, first, last) => {
        d.token_expires_in = 2
        d.access_token = String(draw(d, 100000, 999999))
        d.token_type = "Bearer"
        d.token_scope = grantType
        d.user_first_name = first
        d.user_last_name = last
        return dict({ expires_in: 2, access_token: d.access_token, token_type: "Bearer", scope: grantType })
      }
    ),
    travel_get_login_status: query([], (s) => dict({ status: !(s.token_expires_in === null || pyEq(s.token_expires_in, 0)) })),
    get_budget_fiscal_year: query([["lastModifiedAfter", null], ["includeRemoved", null]], () => dict({ budget_fiscal_year: "2018" })),
    register_credit_card: mutating<TravelState>(
      ["access_token", "card_number", "expiration_date", "cardholder_name", "card_verification_number"],
      (d, accessToken, cardNumber, expiration, holder, cvv) => {
        if (d.token_expires_in === null) return dict({ error: "Token not initialized" })
        if (pyEq(d.token_expires_in, 0)) return dict({ error: "Token expired" })
        if (!pyEq(accessToken, d.access_token)) return dict({ error: "Invalid access token" })
        if (pyIn(cardNumber, d.credit_card_list)) return dict({ error: "Card already registered" })
        const cardId = String(draw(d, 100000000000, 999999999999))
        const card = dict({ card_number: cardNumber, expiration_date: expiration, cardholder_name: holder, card_verification_number: cvv, balance: draw(d, 10000, 99999) })
        d.credit_card_list = asDict(d.credit_card_list, "__setitem__").set(cardId, card)
        return dict({ card_id: cardId })
      }
    ),
    get_flight_cost: query(["travel_from", "travel_to", "travel_date", "travel_class"], (s, from, to, date, travelClass) =>
      dict({ travel_cost_list: flightCost(s, from, to, date, travelClass).list })),
    get_credit_card_balance: query(["access_token", "card_id"], (s, accessToken, cardId) => {
      const bad = tokenChecks(s, accessToken)
      if (bad !== undefined) return bad
      const cards = asDict(s.credit_card_list, "keys")
      if (!pyIn(cardId, cards)) return dict({ error: "Card not registered. Here are a list of card_id's: " + pyRepr(cards.keys()) })
      return dict({ card_balance: item(cards.item(cardId), "balance") })
    }),
    book_flight: mutating<TravelState>(
      ["access_token", "card_id", "travel_date", "travel_from", "travel_to", "travel_class"],
      (d, accessToken, cardId, date, from, to, travelClass) => {
        const bad = tokenChecks(d, accessToken, { booking_status: false })
        if (bad !== undefined) return bad
        const fail = (error: string) => dict({ booking_status: false, error })
        if (!pyIn(cardId, d.credit_card_list)) return fail("Card not registered")
        const cards = asDict(d.credit_card_list, "__getitem__")
        if (!pyIn("balance", cards.item(cardId))) return fail("Balance not found")
        if (!pyIn(from, AIRPORTS)) return fail(`Invalid departure airport code: ${pyStr(from)}`)
        if (!pyIn(to, AIRPORTS)) return fail(`Invalid destination airport code: ${pyStr(to)}`)
        try {
          strptime(date, false)
        } catch (e) {
          if (e instanceof PyError && e.pyClass === "ValueError") return fail("Invalid date format. Use YYYY-MM-DD.")
          throw e
        }
        const classes = PySet.of(["economy", "business", "first"])
        if (!classes.has(travelClass)) return fail(`Invalid travel class. Must be one of ${pyRepr(classes)}`)
        let cost: Py
        try {
          cost = flightCost(d, from, to, date, travelClass).cost
        } catch (e) {
          if (e instanceof PyError && e.pyClass === "ValueError") return fail(e.text)
          throw e
        }
        const balance = item(cards.item(cardId), "balance")
        if (pyCompare("<", balance, cost)) return fail("Insufficient funds")
        if (d.budget_limit !== null && pyCompare("<", balance, d.budget_limit)) return fail("Balance is less than budget limit")
        updateBalance(d, cardId, (b) => pySub(b, cost))
        const bookingId = String(draw(d, 1000000, 9999999))
        const transactionId = String(draw(d, 10000000, 99999999))
        d.booking_record = asDict(d.booking_record, "__setitem__").set(
          bookingId,
          dict({ card_id: cardId, travel_date: date, travel_from: from, travel_to: to, travel_class: travelClass, travel_cost: cost, transaction_id: transactionId })
        )
        return dict({ booking_id: bookingId, transaction_id: transactionId, booking_status: true, booking_history: d.long_context ? d.booking_record : PyDict.empty })
      }
    ),
    retrieve_invoice: query(["access_token", ["booking_id", null], ["insurance_id", null]], (s, accessToken, bookingId) => {
      const bad = tokenChecks(s, accessToken)
      if (bad !== undefined) return bad
      if (!pyIn(bookingId as Py, s.booking_record)) return dict({ error: "Booking not found" })
      const b = asDict(s.booking_record, "__getitem__").item(bookingId as Py)
      const field = (k: string) => item(b, k)
      return dict({
        invoice: dict({
          booking_id: bookingId as Py,
          travel_date: field("travel_date"),
          travel_from: field("travel_from"),
          travel_to: field("travel_to"),
          travel_class: field("travel_class"),
          travel_cost: field("travel_cost"),
          transaction_id: field("transaction_id")
        })
      })
    }),
    get_booking_history: query(["access_token"], (s, accessToken) => tokenChecks(s, accessToken) ?? dict({ booking_history: s.booking_record })),
    list_all_airports: query([], () => [...AIRPORTS]),
    cancel_booking: mutating<TravelState>(["access_token", "booking_id"], (d, accessToken, bookingId) => {
      const bad = tokenChecks(d, accessToken, { cancel_status: false })
      if (bad !== undefined) return bad
      if (!pyIn(bookingId, d.booking_record)) return dict({ cancel_status: false, error: "Booking not found" })
      const bookings = asDict(d.booking_record, "__getitem__")
      const booking = bookings.item(bookingId)
      const cardId = item(booking, "card_id")
      const cost = item(booking, "travel_cost")
      updateBalance(d, cardId, (b) => pyAdd(b, cost))
      d.booking_record = bookings.delete(bookingId)
      return dict({ cancel_status: true })
    }),
    compute_exchange_rate: query(["base_currency", "target_currency", "value"], (_, base, target, value) => {
      for (const [from, to, rate] of exchangeRates) {
        if (pyEq(base, from) && pyEq(target, to)) return dict({ exchanged_value: float(toFloat(pyMul(value, rate))) })
        if (pyEq(base, to) && pyEq(target, from)) return dict({ exchanged_value: float(roundFloat(pyTrueDiv(value, rate).value, 2)) })
      }
      throw new PyError("ValueError", "No available exchange rate for the given currencies.")
    }),
    verify_traveler_information: query(["first_name", "last_name", "date_of_birth", "passport_number"], (s, first, last, birth, passport) => {
      if (!pyEq(s.user_first_name, first) || !pyEq(s.user_last_name, last)) {
        return dict({
          verification_status: false,
          verification_failure: "Cannot book flight information for another user." +
            `Expected ${pyStr(s.user_first_name)} ${pyStr(s.user_last_name)}, got ${pyStr(first)} ${pyStr(last)}`
        })
      }
      let age: number
      try {
        const born = new Date(strptime(birth, false) * 1000)
        const today = new Date()
        const beforeBirthday = today.getMonth() + 1 < born.getUTCMonth() + 1 ||
          (today.getMonth() === born.getUTCMonth() && today.getDate() < born.getUTCDate())
        age = today.getFullYear() - born.getUTCFullYear() - (beforeBirthday ? 1 : 0)
      } catch (e) {
        if (e instanceof PyError && e.pyClass === "ValueError") {
          return dict({ verification_status: false, verification_failure: "Invalid date of birth format. Please use YYYY-MM-DD." })
        }
        throw e
      }
      if (age < 18) return dict({ verification_status: false, verification_failure: "Traveler must be at least 18 years old." })
      if (!asStr(passport, "startswith").startsWith("US")) {
        return dict({ verification_status: false, verification_failure: "Passport must be issued by the United States." })
      }
      return dict({ verification_status: true })
    }),
    set_budget_limit: mutating<TravelState>(["access_token", "budget_limit"], (d, accessToken, limit) => {
      const bad = tokenChecks(d, accessToken)
      if (bad !== undefined) return bad
      const value = float(toFloat(limit))
      d.budget_limit = value
      return dict({ budget_limit: value })
    }),
    get_nearest_airport_by_city: query(["location"], (_, location) =>
      dict({ nearest_airport: airportByCity.has(location) ? airportByCity.item(location) : "Unknown" })),
    purchase_insurance: mutating<TravelState>(
      ["access_token", "insurance_type", "booking_id", "insurance_cost", "card_id"],
      (d, accessToken, _type, bookingId, cost, cardId) => {
        const bad = tokenChecks(d, accessToken, { insurance_status: false })
        if (bad !== undefined) return bad
        if (d.budget_limit !== null && pyCompare("<", d.budget_limit, cost)) return dict({ insurance_status: false, error: "Exceeded budget limit" })
        if (!pyIn(bookingId, d.booking_record)) return dict({ insurance_status: false, error: "Booking not found" })
        if (!pyIn(cardId, d.credit_card_list)) return dict({ insurance_status: false, error: "Credit card not registered" })
        updateBalance(d, cardId, (b) => pySub(b, cost))
        return dict({ insurance_id: String(draw(d, 100000000, 999999999)), insurance_status: true })
      }
    ),
    contact_customer_support: query(["booking_id", "message"], (s, bookingId) => {
      if (!pyIn(bookingId, s.booking_record)) return dict({ error: "Booking not found" })
      return dict({
        customer_support_message: "Thank you for contacting customer support. Your message has been received and we will get back to you shortly."
      })
    }),
    get_all_credit_cards: query([], (s) => dict({ credit_card_list: s.credit_card_list }))
  },
  shareBack: (s, longContext) => {
    const cards = s.credit_card_list
    if (s.sharedCards.length === 0 || !(cards instanceof PyDict)) return longContext
    let extension = asDict(longContext.get("CREDIT_CARD_EXTENSION") ?? PyDict.empty, "items")
    for (const id of s.sharedCards) {
      const card = cards.get(id)
      if (card !== undefined) extension = extension.set(id, card)
    }
    return longContext.set("CREDIT_CARD_EXTENSION", extension)
  }
}
