/**
 * TradingBot: orders keyed by int id, an account, stocks, a watch list and a transaction history
 * whose timestamps are drawn from the instance's `random.Random` within a day of upstream's fixed
 * "current time" (2024-09-01 10:30, read as UTC).
 */
import { type Api, dict, getOr, type LongContext, mutating, query } from "./api.ts"
import {
  asStr,
  formatFixed,
  float,
  isInt,
  isNumber,
  noAttribute,
  num,
  type Py,
  pyAdd,
  pyCompare,
  PyDict,
  pyEq,
  pyIn,
  pyIter,
  pyRepr,
  pyStr,
  pySub,
  toFloat,
  truthy,
  typeError,
  typeName
} from "./py.ts"
import { strptime } from "./datetime.ts"
import { PyRandom } from "./random.ts"

export interface TradingState {
  readonly orders: Py
  readonly account_info: Py
  readonly authenticated: Py
  readonly market_status: Py
  readonly order_counter: Py
  readonly stocks: Py
  readonly watch_list: Py
  readonly transaction_history: Py
  readonly long_context: boolean
  readonly extension: LongContext | undefined
  readonly random: PyRandom
}

const stock = (price: number, change: number, volume: number, ma5: number, ma20: number) =>
  PyDict.fromRecord({ price: float(price), percent_change: float(change), volume: float(volume), "MA(5)": float(ma5), "MA(20)": float(ma20) })

const defaultStocks = (): PyDict =>
  PyDict.fromRecord({
    AAPL: stock(227.16, 0.17, 2.552, 227.11, 227.09),
    GOOG: stock(2840.34, 0.24, 1.123, 2835.67, 2842.15),
    TSLA: stock(667.92, -0.12, 1.654, 671.15, 668.2),
    MSFT: stock(310.23, 0.09, 3.234, 309.88, 310.11),
    NVDA: stock(220.34, 0.34, 1.234, 220.45, 220.67),
    ALPH: stock(1320.45, -0.08, 1.567, 1321.12, 1325.78),
    OMEG: stock(457.23, 0.12, 2.345, 456.78, 458.12),
    QUAS: stock(725.89, -0.03, 1.789, 726.45, 728.0),
    NEPT: stock(88.34, 0.19, 0.654, 88.21, 88.67),
    SYNX: stock(345.67, 0.11, 2.112, 345.34, 346.12),
    ZETA: stock(22.09, -0.05, 0.789, 22.12, 22.34)
  })

const defaultOrders = (): PyDict =>
  PyDict.of([
    [12345, PyDict.fromRecord({ id: 12345, order_type: "Buy", symbol: "AAPL", price: float(210.65), amount: 10, status: "Completed" })],
    [12446, PyDict.fromRecord({ id: 12446, order_type: "Sell", symbol: "GOOG", price: float(2840.56), amount: 5, status: "Pending" })]
  ])

const symbols: Readonly<Record<string, string>> = {
  Apple: "AAPL",
  Google: "GOOG",
  Tesla: "TSLA",
  Microsoft: "MSFT",
  Nvidia: "NVDA",
  "Zeta Corp": "ZETA",
  "Alpha Tech": "ALPH",
  "Omega Industries": "OMEG",
  "Quasar Ltd.": "QUAS",
  "Neptune Systems": "NEPT",
  "Synex Solutions": "SYNX",
  Amazon: "AMZN",
  Gorilla: "GORI"
}

const asDict = (v: Py, attr: string): PyDict => {
  if (v instanceof PyDict) return v
  throw noAttribute(v, attr)
}

const item = (v: Py, k: Py): Py => {
  if (v instanceof PyDict) return v.item(k)
  if (typeof v === "string") throw typeError(`string indices must be integers, not '${typeName(k)}'`)
  throw typeError(`'${typeName(v)}' object is not subscriptable`)
}

const ext = (s: TradingState, name: string): Py => s.extension?.get(name) ?? null

const CURRENT_TIME = Date.UTC(2024, 8, 1, 10, 30) / 1000

const pad = (n: number, w = 2) => String(n).padStart(w, "0")

/** A timestamp drawn as upstream draws it, formatted `%Y-%m-%d %H:%M:%S`. */
const drawTimestamp = (d: { random: PyRandom }): string => {
  const draws = d.random.draws()
  const t = draws.randint(CURRENT_TIME, CURRENT_TIME + 86400)
  d.random = draws.done()
  const date = new Date(t * 1000)
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`
}

const fixed2 = (x: number): string => formatFixed(x, 2)

const notAuthenticated = (what: string) => dict({ error: `User not authenticated. Please log in to ${what}.` })

export const TradingBot: Api<TradingState> = {
  name: "TradingBot",
  load: (config, longContext) => {
    const orders = asDict(getOr(config, "orders", defaultOrders()), "items")
    const seed = getOr(config, "random_seed", 1053520)
    return {
      orders: PyDict.of(orders.entries().map(([k, v]) => [typeof k === "string" && /^\d+$/.test(k) ? Number(k) : k, v] as const)),
      account_info: getOr(config, "account_info", PyDict.fromRecord({ account_id: 12345, balance: float(10000), binding_card: 1974202140965533 })),
      authenticated: getOr(config, "authenticated", false),
      market_status: getOr(config, "market_status", "Closed"),
      order_counter: getOr(config, "order_counter", 12446),
      stocks: getOr(config, "stocks", defaultStocks()),
      watch_list: getOr(config, "watch_list", ["NVDA"]),
      transaction_history: getOr(config, "transaction_history", []),
      long_context: longContext !== undefined,
      extension: longContext,
      random: PyRandom.seeded(typeof seed === "number" ? seed : 1053520)
    }
  },
  publicState: (s) => [
    ["orders", s.orders],
    ["account_info", s.account_info],
    ["authenticated", s.authenticated],
    ["market_status", s.market_status],
    ["order_counter", s.order_counter],
    ["stocks", s.stocks],
    ["watch_list", s.watch_list],
    ["transaction_history", s.transaction_history],
    ["long_context", s.long_context]
  ],
  methods: {
    get_current_time: query([], () => dict({ current_time: "10:30 AM" })),
    get_symbol_by_name: query(["name"], (_, name) => {
      const hit = Object.entries(symbols).find(([n]) => pyEq(name, n))
      if (hit === undefined) PyDict.empty.has(name) // an unhashable name raises, as dict.get does
      return dict({ symbol: hit === undefined ? "Stock not found" : hit[1] })
    }),
    get_stock_info: query(["symbol"], (s, symbol) => {
      if (!pyIn(symbol, s.stocks)) return dict({ error: `Stock with symbol '${pyStr(symbol)}' not found.` })
      const info = asDict(s.stocks, "__getitem__").item(symbol)
      if (s.long_context) return asDict(info, "copy").set("MA(5)", ext(s, "MA_5_EXTENSION")).set("MA(20)", ext(s, "MA_20_EXTENSION"))
      return info
    }),
    get_order_details: query(["order_id"], (s, orderId) => {
      const orders = asDict(s.orders, "keys")
      if (!pyIn(orderId, orders)) {
        return dict({ error: `Order with ID ${pyStr(orderId)} not found.` + "Here is the list of orders_id: " + pyRepr(orders.keys()) })
      }
      const order = orders.item(orderId)
      if (!s.long_context) return order
      const copy = asDict(order, "copy")
      const symbol = copy.item("symbol")
      let formatted = PyDict.empty
      for (const [k, v] of asDict(ext(s, "ORDER_DETAIL_EXTENSION"), "items").entries()) {
        formatted = formatted.set(k, asStr(v, "format").replaceAll("{symbol}", pyStr(symbol)))
      }
      return copy.set("metadata", formatted)
    }),
    cancel_order: mutating<TradingState>(["order_id"], (d, orderId) => {
      const orders = asDict(d.orders, "__getitem__")
      if (!pyIn(orderId, orders)) return dict({ error: `Order with ID ${pyStr(orderId)} not found.` })
      const order = orders.item(orderId)
      if (pyEq(item(order, "status"), "Completed")) return dict({ error: `Can't cancel order ${pyStr(orderId)}. Order is already completed.` })
      d.orders = orders.set(orderId, asDict(order, "__setitem__").set("status", "Cancelled"))
      return dict({ order_id: orderId, status: "Cancelled" })
    }),
    place_order: mutating<TradingState>(["order_type", "symbol", "price", "amount"], (d, orderType, symbol, price, amount) => {
      if (!truthy(d.authenticated)) return notAuthenticated("place an order")
      if (!pyIn(symbol, d.stocks)) return dict({ error: `Invalid stock symbol: ${pyStr(symbol)}` })
      if (pyCompare("<=", price, 0) || pyCompare("<=", amount, 0)) return dict({ error: "Price and amount must be positive values." })
      if (asStr(orderType, "lower").toLowerCase() === "buy") {
        const amountInt = isInt(amount) ? num(amount) : Math.trunc(toFloat(amount))
        const totalCost = toFloat(price) * amountInt
        const balance = asDict(d.account_info, "get").get("balance") ?? 0
        if (pyCompare(">", float(totalCost), balance)) {
          if (!isNumber(balance)) throw typeError(`unsupported format string passed to ${typeName(balance)}.__format__`)
          return dict({ error: `Insufficient funds: required $${fixed2(totalCost)} but only $${fixed2(num(balance))} available.` })
        }
      }
      const p = float(toFloat(price))
      const orderId = d.order_counter
      d.orders = asDict(d.orders, "__setitem__").set(orderId, dict({ id: orderId, order_type: orderType, symbol, price: p, amount, status: "Open" }))
      d.order_counter = pyAdd(d.order_counter, 1)
      return dict({ order_id: orderId, order_type: orderType, status: "Pending", price: p, amount })
    }),
    withdraw_funds: mutating<TradingState>(["amount"], (d, amount) => {
      if (!truthy(d.authenticated)) return notAuthenticated("make a transaction")
      if (!pyEq(d.market_status, "Open")) return dict({ error: "Market is closed. Transactions are not allowed." })
      if (pyCompare("<=", amount, 0)) return dict({ error: "Transaction amount must be positive." })
      const account = asDict(d.account_info, "__getitem__")
      if (pyCompare(">", amount, account.item("balance"))) return dict({ error: "Insufficient funds for withdrawal." })
      d.account_info = account.set("balance", pySub(account.item("balance"), amount))
      if (!Array.isArray(d.transaction_history)) throw noAttribute(d.transaction_history, "append")
      const entry = dict({ type: "withdrawal", amount, timestamp: drawTimestamp(d) })
      d.transaction_history = [...d.transaction_history, entry]
      return dict({ status: "Withdrawal successful", new_balance: asDict(d.account_info, "__getitem__").item("balance") })
    }),
    get_account_info: query([], (s) => (truthy(s.authenticated) ? s.account_info : notAuthenticated("view account information"))),
    trading_login: mutating<TradingState>(["username", "password"], (d) => {
      if (truthy(d.authenticated)) return dict({ status: "Already logged in" })
      d.authenticated = true
      return dict({ status: "Logged in successfully" })
    }),
    trading_get_login_status: query([], (s) => dict({ status: truthy(s.authenticated) })),
    trading_logout: mutating<TradingState>([], (d) => {
      if (!truthy(d.authenticated)) return dict({ status: "No user is currently logged in" })
      d.authenticated = false
      return dict({ status: "Logged out successfully" })
    }),
    fund_account: mutating<TradingState>(["amount"], (d, amount) => {
      if (!truthy(d.authenticated)) return notAuthenticated("fund the account")
      if (pyCompare("<=", amount, 0)) return dict({ error: "Funding amount must be positive." })
      const account = asDict(d.account_info, "__getitem__")
      d.account_info = account.set("balance", pyAdd(account.item("balance"), amount))
      if (!Array.isArray(d.transaction_history)) throw noAttribute(d.transaction_history, "append")
      const entry = dict({ type: "deposit", amount, timestamp: drawTimestamp(d) })
      d.transaction_history = [...d.transaction_history, entry]
      return dict({ status: "Account funded successfully", new_balance: asDict(d.account_info, "__getitem__").item("balance") })
    }),
    remove_stock_from_watchlist: mutating<TradingState>(["symbol"], (d, symbol) => {
      if (!truthy(d.authenticated)) return notAuthenticated("modify the watchlist")
      if (!pyIn(symbol, d.watch_list)) return dict({ error: `Stock ${pyStr(symbol)} not found in watchlist.` })
      const list = pyIter(d.watch_list)
      const at = list.findIndex((x) => pyEq(x, symbol))
      d.watch_list = [...list.slice(0, at), ...list.slice(at + 1)]
      return dict({ status: `Stock ${pyStr(symbol)} removed from watchlist successfully.` })
    }),
    get_watchlist: query([], (s) => {
      if (!truthy(s.authenticated)) return ["Error: User not authenticated. Please log in to view the watchlist."]
      if (s.long_context) return [...pyIter(s.watch_list), ...pyIter(ext(s, "WATCH_LIST_EXTENSION"))]
      return dict({ watchlist: s.watch_list })
    }),
    get_order_history: query([], (s) => {
      if (!truthy(s.authenticated)) return [dict({ error: "User not authenticated. Please log in to view order history." })]
      return dict({ history: asDict(s.orders, "keys").keys() })
    }),
    get_transaction_history: query([["start_date", null], ["end_date", null]], (s, startDate, endDate) => {
      if (!truthy(s.authenticated)) return [dict({ error: "User not authenticated. Please log in to view transaction history." })]
      const start = truthy(startDate as Py) ? strptime(startDate as Py, false) : -Infinity
      const end = truthy(endDate as Py) ? strptime(endDate as Py, false) : Infinity
      const history = pyIter(s.transaction_history).filter((t) => {
        const at = strptime(item(t, "timestamp"), true)
        return start <= at && at <= end
      })
      if (s.long_context) history.push(...pyIter(ext(s, "TRANSACTION_HISTORY_EXTENSION")))
      return dict({ transaction_history: history })
    }),
    get_available_stocks: query(["sector"], (s, sector) => {
      const technology: Array<Py> = ["AAPL", "GOOG", "MSFT", "NVDA"]
      const automobile: Array<Py> = ["TSLA", "F", "GM"]
      if (s.long_context) {
        technology.push(...pyIter(ext(s, "TECHNOLOGY_EXTENSION")))
        automobile.push(...pyIter(ext(s, "AUTOMOBILE_EXTENSION")))
      }
      const sectors = PyDict.fromRecord({ Technology: technology, Automobile: automobile })
      return dict({ stock_list: sectors.has(sector) ? sectors.item(sector) : [] })
    }),
    filter_stocks_by_price: query(["stocks", "min_price", "max_price"], (s, stocks, minPrice, maxPrice) => {
      const stocksDict = asDict(s.stocks, "get")
      const priceOf = (symbol: Py): Py => {
        const info = stocksDict.has(symbol) ? stocksDict.item(symbol) : PyDict.empty
        return asDict(info, "get").get("price") ?? 0
      }
      return dict({ filtered_stocks: pyIter(stocks).filter((symbol) => pyCompare(">=", priceOf(symbol), minPrice) && pyCompare("<=", priceOf(symbol), maxPrice)) })
    }),
    add_to_watchlist: mutating<TradingState>(["stock"], (d, stockName) => {
      if (!pyIn(stockName, d.watch_list) && pyIn(stockName, d.stocks)) {
        if (!Array.isArray(d.watch_list)) throw noAttribute(d.watch_list, "append")
        d.watch_list = [...d.watch_list, stockName]
      }
      return dict({ watchlist: d.watch_list })
    }),
    notify_price_change: query(["stocks", "threshold"], (s, stocks, threshold) => {
      const changed = pyIter(stocks).filter((symbol) => {
        if (!pyIn(symbol, s.stocks)) return false
        const change = item(asDict(s.stocks, "__getitem__").item(symbol), "percent_change")
        if (!isNumber(change)) throw typeError(`bad operand type for abs(): '${typeName(change)}'`)
        return pyCompare(">=", change instanceof Object ? float(Math.abs(num(change))) : Math.abs(num(change)), threshold)
      })
      if (changed.length > 0) {
        const bad = changed.findIndex((x) => typeof x !== "string")
        if (bad >= 0) throw typeError(`sequence item ${bad}: expected str instance, ${typeName(changed[bad] as Py)} found`)
        return dict({ notification: `Stocks ${changed.join(", ")} have significant price changes.` })
      }
      return dict({ notification: "No significant price changes in the selected stocks." })
    })
  }
}

