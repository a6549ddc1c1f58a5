/**
 * The telecom tools of upstream src/tau2/domains/telecom/ as pure functions of a World: the
 * agent's 13 tools (tools.py), the simulated user's 30 phone tools (user_tools.py), the plain
 * methods tasks call to set a scene (`set_user_info`, `break_vpn`, ...) and
 * `TelecomEnvironment.sync_tools`, which copies line state into the user's surroundings and
 * settles payment requests after every call that did not raise.
 *
 * Upstream mutates pydantic objects in place and raises ValueError on a bad call. The
 * transcription does the same on a per-call `Session`: records are copied out of the World as
 * they are first touched, mutated like upstream's objects, and the changed ones are the call's
 * writes. A Python exception is the `Raise` class, thrown inside a call and caught at its one
 * boundary (`call`), where it becomes upstream's `"Error: " + str(e)` answer; mutations made
 * before it are kept, as in upstream.
 */
import { type Canonical, type Tool, World } from "../../../src/index.ts"
import { dict, dumps, reprFloat, round2, type PyValue } from "../common/pyjson.ts"
import { pyTypeName, reprString } from "../common/pyrepr.ts"
import {
  agentTables,
  decodeApn,
  defaultApn,
  dumpBill,
  dumpCustomer,
  dumpDevice,
  dumpLine,
  dumpPlan,
  enums,
  envKey,
  envTable,
  userTable,
  type AgentTable,
  type ApnSettings,
  type Bill,
  type Customer,
  type Device,
  type EnvState,
  type Line,
  type PhoneDevice,
  type Plan,
  type Surroundings
} from "./model.ts"
import { isPyFloat, parsePyJson, type PyJson } from "./pyjsonParse.ts"

export type Requestor = "user" | "assistant"
/** Call arguments as Python's json.loads gives them: floats marked (`PyFloat`), ints plain. */
export type Args = { readonly [key: string]: PyJson }

/** Choices upstream leaves to randomness, made injectable (oracle README, nondeterminism 1). */
export interface ToolOptions {
  /** The bill id `_apply_one_time_charge` creates on the n-th (1-based) uuid call of an environment. */
  readonly newBillId: (n: number) => string
}

/** The oracle's pin: uuid4().hex replaced by a counter, so ids are B00000001, B00000002, ... */
export const counterBillIds: ToolOptions = { newBillId: (n) => `B${n.toString(16).padStart(8, "0")}` }

/** A Python exception raised inside a call; `text` is `str(e)`. */
class Raise {
  constructor(readonly text: string) {}
}

const raise = (text: string): never => {
  throw new Raise(text)
}

// -- the per-call session --------------------------------------------------------------------------

const keyFields: Record<AgentTable, string> = Object.fromEntries(agentTables) as Record<AgentTable, string>

/**
 * What a call touched. DB rows are shared with the World until a tool calls `edit` (copy on
 * write: every mutation site of upstream goes through it); the user's `device`,
 * `surroundings` and the `env` state are copied on first access. The writes are the records
 * that differ afterwards, and appended rows.
 */
export class Session {
  private readonly lists = new Map<AgentTable, Array<unknown>>()
  private readonly edited = new Map<unknown, { readonly table: AgentTable; readonly original: string | null }>()
  private readonly singles = new Map<string, { readonly table: string; readonly key: string; readonly value: unknown; readonly original: string }>()

  constructor(
    readonly world: World.World,
    readonly options: ToolOptions
  ) {}

  /** A DB table as upstream's list, in order. Rows are read-only until passed through `edit`. */
  rows<A>(table: AgentTable): ReadonlyArray<A> {
    let rows = this.lists.get(table)
    if (rows === undefined) {
      rows = World.entries(this.world, table).map(([, v]) => v)
      this.lists.set(table, rows)
    }
    return rows as ReadonlyArray<A>
  }

  /** The row as a mutable copy, put in place of the shared one (idempotent). */
  edit<A>(table: AgentTable, row: A): A {
    if (this.edited.has(row)) return row
    const rows = this.lists.get(table) ?? []
    const i = rows.indexOf(row)
    if (i < 0) throw new Error(`edit of a row not in ${table}`)
    const text = JSON.stringify(row)
    const copy = JSON.parse(text) as A
    rows[i] = copy
    this.edited.set(copy, { table, original: text })
    return copy
  }

  /** `self.db.<table>.append(row)`. */
  append<A>(table: AgentTable, row: A): A {
    ;(this.rows(table) as Array<unknown>).push(row)
    this.edited.set(row, { table, original: null })
    return row
  }

  private single<A>(table: string, key: string): A {
    const id = `${table}\u0000${key}`
    let s = this.singles.get(id)
    if (s === undefined) {
      const v = World.get(this.world, table, key)
      if (v === undefined) throw new Error(`world has no ${table}/${key}: not a telecom world`)
      const text = JSON.stringify(v)
      s = { table, key, value: JSON.parse(text) as unknown, original: text }
      this.singles.set(id, s)
    }
    return s.value as A
  }

  get device(): PhoneDevice {
    return this.single<PhoneDevice>(userTable, "device")
  }
  get surroundings(): Surroundings {
    return this.single<Surroundings>(userTable, "surroundings")
  }
  get env(): EnvState {
    return this.single<EnvState>(envTable, envKey)
  }

  /** The changed records, frozen: rows are shared with later calls, so a missed `edit` fails loudly. */
  writes(): Array<World.Write> {
    const out: Array<World.Write> = []
    for (const [row, e] of this.edited) {
      const text = JSON.stringify(row)
      if (text !== e.original) out.push({ table: e.table, key: (row as Record<string, Canonical.Json>)[keyFields[e.table]] as string, value: deepFreeze(row as Canonical.Json) })
    }
    for (const s of this.singles.values()) {
      if (JSON.stringify(s.value) !== s.original) out.push({ table: s.table, key: s.key, value: deepFreeze(s.value as Canonical.Json) })
    }
    return out
  }
}

/** Freeze a JSON value and everything in it. */
export const deepFreeze = <A extends Canonical.Json>(v: A): A => {
  if (v !== null && typeof v === "object" && !Object.isFrozen(v)) {
    for (const x of Object.values(v)) deepFreeze(x as Canonical.Json)
    Object.freeze(v)
  }
  return v
}

// -- Python value helpers ---------------------------------------------------------------------------

/** f-string / str() of an argument value. */
const pyStr = (v: PyJson | undefined): string => {
  if (typeof v === "string") return v
  if (v === null || v === undefined) return "None"
  if (typeof v === "boolean") return v ? "True" : "False"
  if (typeof v === "number") return String(v)
  if (isPyFloat(v)) return reprFloat(v.value)
  return JSON.stringify(v)
}

/** A Python number's value; anything else fails as upstream's first comparison would. */
const numberOf = (v: PyJson | undefined): number => {
  if (typeof v === "number") return v
  if (typeof v === "boolean") return v ? 1 : 0
  if (isPyFloat(v)) return v.value
  return raise(`'<=' not supported between instances of '${typeName(v)}' and 'int'`)
}

const isFloatArg = (v: PyJson | undefined): boolean => isPyFloat(v)

const typeName = (v: PyJson | undefined): string => pyTypeName(v, isPyFloat)

/** Python `repr()` of a str. */
const reprStr = (s: string): string => reprString(s)

/** `format(x, ".2f")`: correctly rounded, ties to even on the exact binary value. */
const fixed2 = (x: number): string => round2(x).toFixed(2)

/** `to_json_str` of a plain dict: each int/float/bool value becomes `str(value)`. */
const plainDict = (entries: ReadonlyArray<readonly [string, PyValue]>): string => dumps(dict(entries))

// -- TelecomTools (the agent's side) ------------------------------------------------------------------

const customers = (s: Session) => s.rows<Customer>("customers")
const lines = (s: Session) => s.rows<Line>("lines")
const bills = (s: Session) => s.rows<Bill>("bills")

const lineById = (s: Session, id: PyJson | undefined): Line =>
  lines(s).find((l) => l.line_id === id) ?? raise(`Line with ID ${pyStr(id)} not found`)
const lineByPhone = (s: Session, phone: PyJson | undefined): Line =>
  lines(s).find((l) => l.phone_number === phone) ?? raise(`Line with phone number ${pyStr(phone)} not found`)
const planById = (s: Session, id: PyJson | undefined): Plan =>
  s.rows<Plan>("plans").find((p) => p.plan_id === id) ?? raise(`Plan with ID ${pyStr(id)} not found`)
const deviceById = (s: Session, id: PyJson | undefined): Device =>
  s.rows<Device>("devices").find((d) => d.device_id === id) ?? raise(`Device with ID ${pyStr(id)} not found`)
const billById = (s: Session, id: PyJson | undefined): Bill =>
  bills(s).find((b) => b.bill_id === id) ?? raise(`Bill with ID ${pyStr(id)} not found`)
const customerById = (s: Session, id: PyJson | undefined): Customer =>
  customers(s).find((c) => c.customer_id === id) ?? raise(`Customer with ID ${pyStr(id)} not found`)

const customerByPhone = (s: Session, phone: PyJson | undefined): Customer => {
  for (const c of customers(s)) {
    if (c.phone_number === phone) return c
    for (const id of c.line_ids) if (lineById(s, id).phone_number === phone) return c
  }
  return raise(`Customer with phone number ${pyStr(phone)} not found`)
}

const targetLine = (s: Session, customerId: PyJson | undefined, lineId: PyJson | undefined): Line => {
  const c = customerById(s, customerId)
  if (!c.line_ids.some((id) => id === lineId)) raise(`Line ${pyStr(lineId)} not found for customer ${pyStr(customerId)}`)
  return lineById(s, lineId)
}

const awaitingPayment = (s: Session, c: Customer): Array<Bill> =>
  c.bill_ids.map((id) => billById(s, id)).filter((b) => b.status === "Awaiting Payment")

// upstream's get_today(): a fixed date.
const TODAY = "2025-02-25"

const applyOneTimeCharge = (s: Session, customerId: PyJson | undefined, amount: number, description: string): void => {
  const c = customerById(s, customerId)
  let draft: Bill | undefined
  for (const id of c.bill_ids) {
    const b = billById(s, id)
    if (b.status === "Draft") {
      draft = s.edit("bills", b)
      break
    }
  }
  if (draft === undefined) {
    const env = s.env
    env.uuid_calls += 1
    const id = s.options.newBillId(env.uuid_calls)
    // Next month of 2025-02-25: March 2025.
    draft = s.append<Bill>("bills", {
      bill_id: id,
      customer_id: customerId as string,
      period_start: "2025-03-01",
      period_end: "2025-03-31",
      issue_date: "2025-03-01",
      total_due: 0,
      due_date: "2025-03-15",
      line_items: [],
      status: "Draft"
    })
    s.edit("customers", c).bill_ids.push(id)
  }
  draft.line_items.push({ description, amount, date: TODAY, item_type: amount < 0 ? "Credit" : "Charge" })
  draft.total_due += amount
}

interface Implementation {
  /** Parameter names in upstream's signature order; those with a default are listed in `defaults`. */
  readonly params: ReadonlyArray<string>
  readonly defaults?: Readonly<Record<string, PyJson>>
  readonly run: (s: Session, a: Args) => string
}

const agentTools: Record<string, Implementation> = {
  get_customer_by_phone: {
    params: ["phone_number"],
    run: (s, a) => dumps(dumpCustomer(customerByPhone(s, a["phone_number"])))
  },
  get_customer_by_id: {
    params: ["customer_id"],
    run: (s, a) => dumps(dumpCustomer(customerById(s, a["customer_id"])))
  },
  get_customer_by_name: {
    params: ["full_name", "dob"],
    run: (s, a) => {
      const name = a["full_name"]
      if (typeof name !== "string") return raise(`'${typeName(name)}' object has no attribute 'lower'`)
      const found = customers(s).filter((c) => c.full_name.toLowerCase() === name.toLowerCase() && c.date_of_birth === a["dob"])
      return dumps(found.map(dumpCustomer))
    }
  },
  get_details_by_id: {
    params: ["id"],
    run: (s, a) => {
      const id = a["id"]
      if (typeof id !== "string") return raise(`'${typeName(id)}' object has no attribute 'startswith'`)
      if (id.startsWith("L")) return dumps(dumpLine(lineById(s, id)))
      if (id.startsWith("D")) return dumps(dumpDevice(deviceById(s, id)))
      if (id.startsWith("B")) return dumps(dumpBill(billById(s, id)))
      if (id.startsWith("C")) return dumps(dumpCustomer(customerById(s, id)))
      if (id.startsWith("P")) return dumps(dumpPlan(planById(s, id)))
      return raise(`Unknown ID format or type: ${id}`)
    }
  },
  suspend_line: {
    params: ["customer_id", "line_id", "reason"],
    run: (s, a) => {
      const line = s.edit("lines", targetLine(s, a["customer_id"], a["line_id"]))
      if (line.status !== "Active") raise("Line must be active to suspend")
      line.status = "Suspended"
      line.suspension_start_date = TODAY
      return plainDict([
        ["message", "Line suspended successfully. $5/month holding fee will apply."],
        ["line", dumpLine(line)]
      ])
    }
  },
  resume_line: {
    params: ["customer_id", "line_id"],
    run: (s, a) => {
      const line = s.edit("lines", targetLine(s, a["customer_id"], a["line_id"]))
      if (line.status !== "Suspended" && line.status !== "Pending Activation") raise("Line must be suspended to resume")
      line.status = "Active"
      line.suspension_start_date = null
      return plainDict([
        ["message", "Line resumed successfully"],
        ["line", dumpLine(line)]
      ])
    }
  },
  get_bills_for_customer: {
    params: ["customer_id", "limit"],
    defaults: { limit: 12 },
    run: (s, a) => {
      const c = customerById(s, a["customer_id"])
      const found = c.bill_ids.map((id) => billById(s, id))
      // sorted(..., reverse=True) is stable: equal dates keep their order.
      const sorted = found
        .map((b, i) => [b, i] as const)
        .sort((x, y) => (x[0].issue_date < y[0].issue_date ? 1 : x[0].issue_date > y[0].issue_date ? -1 : x[1] - y[1]))
        .map(([b]) => b)
      const given = a["limit"]
      // A bool is an int in Python; None means no limit.
      const limit = typeof given === "boolean" ? (given ? 1 : 0) : given === null ? Number.MAX_SAFE_INTEGER : given
      if (typeof limit !== "number" || !Number.isInteger(limit)) return raise("slice indices must be integers or None or have an __index__ method")
      // Python slicing: a negative limit counts from the end.
      const end = limit < 0 ? Math.max(0, sorted.length + limit) : Math.min(limit, sorted.length)
      return dumps(sorted.slice(0, end).map(dumpBill))
    }
  },
  send_payment_request: {
    params: ["customer_id", "bill_id"],
    run: (s, a) => {
      const c = customerById(s, a["customer_id"])
      if (awaitingPayment(s, c).length !== 0) raise("A bill is already awaiting payment for this customer")
      if (!c.bill_ids.some((id) => id === a["bill_id"])) raise(`Bill ${pyStr(a["bill_id"])} not found for customer ${pyStr(a["customer_id"])}`)
      const bill = s.edit("bills", billById(s, a["bill_id"]))
      bill.status = "Awaiting Payment"
      return `Payment request sent to the customer for bill ${bill.bill_id}`
    }
  },
  get_data_usage: {
    params: ["customer_id", "line_id"],
    run: (s, a) => {
      const line = targetLine(s, a["customer_id"], a["line_id"])
      const plan = planById(s, line.plan_id)
      return plainDict([
        ["line_id", pyStrValue(a["line_id"])],
        ["data_used_gb", reprFloat(line.data_used_gb)],
        ["data_limit_gb", reprFloat(plan.data_limit_gb)],
        ["data_refueling_gb", reprFloat(line.data_refueling_gb)],
        // The last day of today's month (2025-02), as isoformat().
        ["cycle_end_date", "2025-02-28"]
      ])
    }
  },
  enable_roaming: {
    params: ["customer_id", "line_id"],
    run: (s, a) => {
      const line = targetLine(s, a["customer_id"], a["line_id"])
      if (line.roaming_enabled) return "Roaming was already enabled"
      s.edit("lines", line).roaming_enabled = true
      return "Roaming enabled successfully"
    }
  },
  disable_roaming: {
    params: ["customer_id", "line_id"],
    run: (s, a) => {
      const line = targetLine(s, a["customer_id"], a["line_id"])
      if (!line.roaming_enabled) return "Roaming was already disabled"
      s.edit("lines", line).roaming_enabled = false
      return "Roaming disabled successfully"
    }
  },
  transfer_to_human_agents: {
    params: ["summary"],
    run: () => "Transfer successful"
  },
  refuel_data: {
    params: ["customer_id", "line_id", "gb_amount"],
    run: (s, a) => {
      const line = s.edit("lines", targetLine(s, a["customer_id"], a["line_id"]))
      const gbArg = a["gb_amount"]
      const gb = numberOf(gbArg)
      if (gb <= 0) raise("Refuel amount must be positive")
      const plan = planById(s, line.plan_id)
      const charge = gb * plan.data_refueling_price_per_gb
      line.data_refueling_gb += gb
      const gbText = isFloatArg(gbArg) ? reprFloat(gb) : pyStr(gbArg)
      applyOneTimeCharge(s, a["customer_id"], charge, `Data refueling: ${gbText} GB at $${reprFloat(plan.data_refueling_price_per_gb)}/GB`)
      return plainDict([
        ["message", `Successfully added ${gbText} GB of data for line ${pyStr(a["line_id"])} for $${fixed2(charge)}`],
        ["new_data_refueling_gb", reprFloat(line.data_refueling_gb)],
        ["charge", reprFloat(charge)]
      ])
    }
  }
}

/** A value as `_process` leaves it inside a plain dict (numbers and bools as `str()`). */
const pyStrValue = (v: PyJson | undefined): PyValue =>
  typeof v === "string" || v === null || v === undefined ? (v ?? null) : typeof v === "object" && !isPyFloat(v) ? (v as unknown as PyValue) : pyStr(v)

/** Agent-side methods that are not tools: tasks call them to set a scene or to assert. */
const agentFunctions: Record<string, Implementation> = {
  set_data_usage: {
    params: ["customer_id", "line_id", "data_used_gb"],
    run: (s, a) => {
      const line = s.edit("lines", targetLine(s, a["customer_id"], a["line_id"]))
      line.data_used_gb = numberOf(a["data_used_gb"])
      return `Data usage set to ${pyStr(a["data_used_gb"])} GB for line ${pyStr(a["line_id"])}`
    }
  },
  suspend_line_for_overdue_bill: {
    params: ["customer_id", "line_id", "new_bill_id", "contract_ended"],
    run: (s, a) => {
      const line = s.edit("lines", lineById(s, a["line_id"]))
      if (line.status !== "Active") raise("Line must be active to suspend for unpaid bill")
      const plan = planById(s, line.plan_id)
      const amount = plan.price_per_month
      if (amount <= 0) raise("Amount must be positive for overdue bill")
      const c = s.edit("customers", customerById(s, a["customer_id"]))
      if (c.bill_ids.some((id) => billById(s, id).status === "Overdue")) raise("Customer already has an overdue bill")
      const id = a["new_bill_id"] as string
      // Last month of 2025-02-25: January 2025.
      s.append<Bill>("bills", {
        bill_id: id,
        customer_id: a["customer_id"] as string,
        period_start: "2025-01-01",
        period_end: "2025-01-31",
        issue_date: "2025-01-01",
        total_due: 0 + amount,
        due_date: "2025-01-15",
        line_items: [{ description: `Charge for line ${line.line_id}`, amount, date: TODAY, item_type: amount > 0 ? "Charge" : "Credit" }],
        status: "Overdue"
      })
      c.bill_ids.push(id)
      line.status = "Suspended"
      line.suspension_start_date = TODAY
      if (a["contract_ended"] === true) line.contract_end_date = "2025-01-31"
      return `Line ${pyStr(a["line_id"])} suspended for unpaid bill ${id}. Contract ended: ${pyStr(a["contract_ended"])}`
    }
  },
  assert_data_refueling_amount: {
    params: ["customer_id", "line_id", "expected_amount"],
    run: (s, a) => pyBool(Math.abs(targetLine(s, a["customer_id"], a["line_id"]).data_refueling_gb - numberOf(a["expected_amount"])) < 1e-6)
  },
  assert_line_status: {
    params: ["customer_id", "line_id", "expected_status"],
    run: (s, a) => pyBool(targetLine(s, a["customer_id"], a["line_id"]).status === a["expected_status"])
  },
  assert_overdue_bill_exists: {
    params: ["customer_id", "overdue_bill_id"],
    run: (s, a) => {
      const c = customerById(s, a["customer_id"])
      const id = a["overdue_bill_id"]
      if (!c.bill_ids.some((b) => b === id)) raise(`Overdue bill ${pyStr(id)} not found`)
      if (billById(s, id).status !== "Overdue") raise(`Overdue bill ${pyStr(id)} is not overdue`)
      return pyBool(true)
    }
  },
  assert_no_overdue_bill: {
    params: ["overdue_bill_id"],
    run: (s, a) => {
      const bill = bills(s).find((b) => b.bill_id === a["overdue_bill_id"])
      return pyBool(bill === undefined || bill.status === "Paid")
    }
  }
}

/** Assertion methods answer a Python bool; the text form keeps one return type for all methods. */
const pyBool = (b: boolean): string => (b ? "True" : "False")

// -- TelecomUserTools (the phone) ---------------------------------------------------------------------

const signalText: Record<string, string> = {
  none: "📵 No Signal",
  poor: "📶¹ Poor",
  fair: "📶² Fair",
  good: "📶³ Good",
  excellent: "📶⁴ Excellent"
}

const statusBar = (s: Session): string => {
  const d = s.device
  const out: Array<string> = []
  if (d.airplane_mode) out.push("✈️ Airplane Mode")
  else {
    out.push(signalText[d.network_signal_strength] ?? "📵 No Signal")
    if (d.network_technology_connected !== "none") out.push(d.network_technology_connected)
    if (d.data_enabled && d.network_technology_connected !== "none") {
      out.push("📱 Data Enabled")
      if (d.data_saver_mode) out.push("🔽 Data Saver")
    } else out.push("📵 Data Disabled")
  }
  if (d.wifi_enabled && d.wifi_connected) out.push(d.wifi_ssid ? `📡 Connected to ${d.wifi_ssid}` : "📡 Enabled")
  if (d.vpn_connected) out.push("🔒 VPN Connected")
  out.push(`🔋 ${d.battery_level}%`)
  return out.join(" | ")
}

const withBar = (s: Session, text: string): string => `${text}\nStatus Bar: ${statusBar(s)}`

const simStatus = (s: Session): string => (s.device.sim_card_missing ? "missing" : s.device.sim_card_status)

const noService = (d: PhoneDevice): void => {
  d.network_connection_status = "no_service"
  d.network_technology_connected = "none"
  d.network_signal_strength = "none"
}

const simulateNetworkSearch = (s: Session): void => {
  const d = s.device
  const signal = s.surroundings.signal_strength
  const connect = (tech: string) => {
    d.network_technology_connected = tech
    d.network_signal_strength = signal[tech] ?? "none"
  }
  if (simStatus(s) === "active") {
    d.network_connection_status = "connected"
    const pref = d.network_mode_preference
    if (pref === "4g_5g_preferred") {
      if ((signal["5G"] ?? "none") === "none") connect("4G")
      else connect("5G")
    } else if (pref === "4g_only") connect("4G")
    else if (pref === "3g_only") connect("3G")
    else if (pref === "2g_only") connect("2G")
    else connect("4G")
  } else noService(d)
  if (d.airplane_mode) noService(d)
  if (d.active_apn_settings.apn_name === "broken") noService(d)
  if (!s.surroundings.line_active) noService(d)
}

const mobileDataWorking = (s: Session): boolean => {
  const d = s.device
  const u = s.surroundings
  if (d.airplane_mode || d.network_signal_strength === "none") return false
  if (d.network_connection_status === "no_service") return false
  if (u.is_abroad && (!d.roaming_enabled || !u.roaming_allowed)) return false
  if (!d.data_enabled) return false
  if (u.mobile_data_usage_exceeded) return false
  return true
}

const techSpeed: Record<string, readonly [number, number]> = {
  "2G": [0.1, 0.4],
  "3G": [1.0, 5.0],
  "4G": [10.0, 100.0],
  "5G": [50.0, 500.0],
  none: [0.0, 0.0]
}
const signalFactor: Record<string, number> = { poor: 0.2, fair: 0.5, good: 0.8, excellent: 1.0, none: 0.0 }

/** `_run_speed_test`: (speed, description), speed null without a connection. */
const speedTest = (s: Session): readonly [number | null, string] => {
  if (!mobileDataWorking(s)) return [null, "No Connection"]
  const d = s.device
  let base = d.vpn_connected && d.vpn_details !== null && d.vpn_details.server_performance === "poor" ? 0.1 : 1.0
  if (d.data_saver_mode) base *= 0.2
  const [min, max] = techSpeed[d.network_technology_connected] ?? [0.0, 0.0]
  const speed = round2((((min + max) / 2.0) * (signalFactor[d.network_signal_strength] ?? 0.0)) * base)
  const desc = speed < 1 ? "Very Poor" : speed < 5 ? "Poor" : speed < 25 ? "Fair" : speed < 100 ? "Good" : "Excellent"
  return [speed, desc]
}

const toggleAirplane = (s: Session): boolean => {
  const d = s.device
  const wasOn = d.airplane_mode
  d.airplane_mode = !wasOn
  if (wasOn) {
    d.network_connection_status = "searching"
    if (d.wifi_enabled) {
      d.wifi_connected = false
      d.wifi_ssid = null
      d.wifi_signal_strength = "none"
    }
  } else {
    d.wifi_connected = false
    d.wifi_ssid = null
    d.wifi_signal_strength = "none"
    if (d.vpn_connected) disconnectVpn(s)
  }
  simulateNetworkSearch(s)
  return d.airplane_mode
}

const toggleData = (s: Session): boolean => {
  s.device.data_enabled = !s.device.data_enabled
  simulateNetworkSearch(s)
  return s.device.data_enabled
}

const toggleRoaming = (s: Session): boolean => {
  s.device.roaming_enabled = !s.device.roaming_enabled
  simulateNetworkSearch(s)
  return s.device.roaming_enabled
}

const toggleDataSaver = (s: Session): boolean => {
  s.device.data_saver_mode = !s.device.data_saver_mode
  return s.device.data_saver_mode
}

const toggleWifiCalling = (s: Session): boolean => {
  s.device.wifi_calling_enabled = !s.device.wifi_calling_enabled
  return s.device.wifi_calling_enabled
}

/**
 * `_connect_vpn`: the device gets the class-level default details object itself (aliased, so
 * `break_vpn` degrades the default too). The World keeps that object in `env.default_vpn` and a
 * copy in the device; `setVpnPerformance` writes both (oracle README, nondeterminism 2).
 */
const connectVpn = (s: Session): boolean | null => {
  if (s.device.vpn_connected) return null
  s.device.vpn_connected = true
  s.device.vpn_details = { ...s.env.default_vpn }
  return true
}

const disconnectVpn = (s: Session): boolean => {
  if (!s.device.vpn_connected) return false
  s.device.vpn_connected = false
  s.device.vpn_details = null
  return true
}

const enumRepr = (cls: string, value: string): string => `<${cls}.${value.toUpperCase()}: ${reprStr(value)}>`

const canSendMms = (s: Session): boolean => {
  const d = s.device
  if (!mobileDataWorking(s)) return false
  if (d.network_technology_connected === "2G") return false
  if (d.wifi_calling_enabled && d.wifi_calling_mms_over_wifi) return false
  if (d.active_apn_settings.mmsc_url === null) return false
  const app = Object.hasOwn(d.app_statuses, "messaging") ? d.app_statuses["messaging"] : undefined
  if (app === undefined) return false
  return app.permissions.storage && app.permissions.sms
}

const permissionNames = ["sms", "storage", "phone", "network"] as const

const appOf = (s: Session, name: PyJson | undefined) =>
  typeof name === "string" && Object.hasOwn(s.device.app_statuses, name) ? s.device.app_statuses[name] : undefined

/** Upstream's turn_X_on/off: toggle once, and again if that did not land on the wanted state. */
const toggledTo = (toggle: (s: Session) => boolean, on: boolean, text: string): Implementation => ({
  params: [],
  run: (s) => {
    if (toggle(s) !== on) toggle(s)
    return text
  }
})

const userTools: Record<string, Implementation> = {
  check_status_bar: { params: [], run: (s) => `Status Bar: ${statusBar(s)}` },
  check_network_status: {
    params: [],
    run: (s) => {
      const d = s.device
      const out = [
        `Airplane Mode: ${d.airplane_mode ? "ON" : "OFF"}`,
        `SIM Card Status: ${simStatus(s)}`,
        `Cellular Connection: ${d.network_connection_status}`,
        `Cellular Signal: ${d.network_signal_strength}`,
        `Cellular Network Type: ${d.network_technology_connected}`,
        `Mobile Data Enabled: ${d.data_enabled ? "Yes" : "No"}`,
        `Data Roaming Enabled: ${d.roaming_enabled ? "Yes" : "No"}`,
        `Wi-Fi Radio: ${d.wifi_enabled ? "ON" : "OFF"}`,
        `Wi-Fi Connected: ${d.wifi_connected ? "Yes" : "No"}`
      ]
      if (d.wifi_connected) out.push(`Connected Wi-Fi Network: ${d.wifi_ssid ?? "None"}`)
      return out.join("\n")
    }
  },
  check_network_mode_preference: { params: [], run: (s) => `Network Mode Preference: ${s.device.network_mode_preference}` },
  set_network_mode_preference: {
    params: ["mode"],
    run: (s, a) => {
      const mode = a["mode"]
      if (typeof mode !== "string" || !(enums.NetworkModePreference as ReadonlyArray<string>).includes(mode)) {
        return withBar(s, `Failed to set network mode: '${pyStr(mode)}' is not a valid option. Please use one of: ${enums.NetworkModePreference.join(", ")}`)
      }
      s.device.network_mode_preference = mode
      simulateNetworkSearch(s)
      return withBar(s, `Preferred Network Mode set to: ${mode}`)
    }
  },
  run_speed_test: {
    params: [],
    run: (s) => {
      const [speed, desc] = speedTest(s)
      if (speed === null) return `Speed test failed: ${desc || "Could not determine speed"}.`
      const advice: Record<string, string> = {
        "Very Poor": "Connection is very slow. Basic web browsing might be difficult.",
        Poor: "Connection is slow. Web browsing may be sluggish, streaming difficult.",
        Fair: "Connection is okay for web browsing and some standard definition streaming.",
        Good: "Connection is good for most activities, including HD streaming.",
        Excellent: "Connection is very fast."
      }
      return `Speed Test Result: ${fixed2(speed)} Mbps (${desc}). ${advice[desc] ?? ""}`
    }
  },
  toggle_airplane_mode: { params: [], run: (s) => withBar(s, `Airplane Mode is now ${toggleAirplane(s) ? "ON" : "OFF"}.`) },
  check_sim_status: {
    params: [],
    run: (s) =>
      ({
        active: "Your SIM card is active and working.",
        missing: "No SIM card detected in the phone.",
        locked_pin: "The SIM card is locked with a PIN code.",
        locked_puk: "The SIM card is locked with a PUK code."
      })[simStatus(s)] ?? `Unknown SIM status: ${simStatus(s)}`
  },
  reseat_sim_card: {
    params: [],
    run: (s) => {
      s.device.sim_card_missing = false
      simulateNetworkSearch(s)
      return withBar(s, "SIM card re-seated successfully.")
    }
  },
  toggle_data: { params: [], run: (s) => withBar(s, `Mobile Data is now ${toggleData(s) ? "ON" : "OFF"}.`) },
  toggle_roaming: { params: [], run: (s) => withBar(s, `Data Roaming is now ${toggleRoaming(s) ? "ON" : "OFF"}.`) },
  check_data_restriction_status: {
    params: [],
    run: (s) => (s.device.data_saver_mode ? "Data Saver mode is ON (limits data usage)." : "Data Saver mode is OFF.")
  },
  toggle_data_saver_mode: { params: [], run: (s) => withBar(s, `Data Saver Mode is now ${toggleDataSaver(s) ? "ON" : "OFF"}.`) },
  check_apn_settings: {
    params: [],
    run: (s) => {
      const apn = s.device.active_apn_settings
      return `Current APN Name: ${apn.apn_name || "Not Set"}\nMMSC URL (for picture messages): ${apn.mmsc_url || "Not Set"}\n(These are technical settings, usually best left unchanged.)`
    }
  },
  set_apn_settings: {
    params: ["apn_settings"],
    run: (s, a) => {
      const given = a["apn_settings"]
      if (typeof given !== "object" || given === null || Array.isArray(given) || isPyFloat(given)) {
        return raise(`'${typeName(given)}' object has no attribute 'apn_name'`)
      }
      const decoded = decodeApn("APNSettings", given)
      // Pydantic's own message is not reproduced; the fuzz corpora send valid settings only.
      if (decoded._tag === "Left") return raise(`1 validation error for APNSettings\n${decoded.left}`)
      s.device.active_apn_settings = decoded.right as unknown as ApnSettings
      const text = `APN settings set to: ${s.device.active_apn_settings.apn_name}`
      simulateNetworkSearch(s)
      return withBar(s, text)
    }
  },
  reset_apn_settings: {
    params: [],
    run: (s) => {
      s.device.active_apn_settings.reset_at_reboot = true
      simulateNetworkSearch(s)
      return withBar(s, "APN settings will reset at reboot.")
    }
  },
  check_wifi_status: {
    params: [],
    run: (s) => {
      const d = s.device
      if (!d.wifi_enabled) return "Wi-Fi is turned OFF."
      if (d.wifi_connected) return `Wi-Fi is ON and connected to '${d.wifi_ssid ?? "None"}'. Signal strength: ${d.wifi_signal_strength}.`
      return "Wi-Fi is ON but not connected to any network."
    }
  },
  toggle_wifi: {
    params: [],
    run: (s) => {
      const d = s.device
      if (d.airplane_mode) return withBar(s, "Cannot change Wi-Fi settings while Airplane Mode is ON.")
      d.wifi_enabled = !d.wifi_enabled
      if (!d.wifi_enabled) {
        d.wifi_connected = false
        d.wifi_ssid = null
        d.wifi_signal_strength = "none"
      }
      return withBar(s, `Wi-Fi is now ${d.wifi_enabled ? "ON" : "OFF"}.`)
    }
  },
  check_wifi_calling_status: {
    params: [],
    run: (s) => `Wi-Fi Calling is currently turned ${s.device.wifi_calling_enabled ? "ON" : "OFF"}.`
  },
  toggle_wifi_calling: { params: [], run: (s) => withBar(s, `Wi-Fi Calling is now ${toggleWifiCalling(s) ? "ON" : "OFF"}.`) },
  check_vpn_status: {
    params: [],
    run: (s) => {
      const d = s.device
      if (d.vpn_connected) {
        const v = d.vpn_details
        if (v === null) return "VPN is ON and connected (no specific details available)."
        // str() of model_dump(): a Python dict repr, the enum shown as its repr.
        const opt = (x: string | null) => (x === null ? "None" : reprStr(x))
        return `VPN is ON and connected. Details: {'server_address': ${opt(v.server_address)}, 'protocol': ${opt(v.protocol)}, 'server_performance': ${enumRepr("PerformanceLevel", v.server_performance)}}`
      }
      return d.vpn_enabled_setting ? "VPN is turned ON in settings, but currently not connected." : "VPN is turned OFF."
    }
  },
  connect_vpn: {
    params: [],
    run: (s) => {
      const connected = connectVpn(s)
      if (connected === null) return "VPN already connected."
      return withBar(s, connected ? "VPN connected successfully." : "No VPN connection to connect.")
    }
  },
  disconnect_vpn: {
    params: [],
    run: (s) => withBar(s, disconnectVpn(s) ? "VPN disconnected successfully." : "No active VPN connection to disconnect.")
  },
  check_installed_apps: {
    params: [],
    run: (s) => `The following apps are installed on the phone: ${Object.keys(s.device.app_statuses).join(", ")}`
  },
  check_app_status: {
    params: ["app_name"],
    run: (s, a) => {
      const name = a["app_name"]
      const app = appOf(s, name)
      if (app === undefined) return `App '${pyStr(name)}' not found on this phone.`
      const out = [`Status for App: ${pyStr(name)}`]
      const allowed = permissionNames.filter((p) => app.permissions[p])
      if (allowed.length === 0) out.push(" - Permissions: None granted.")
      else {
        out.push(" - Permissions Granted:")
        for (const p of allowed) out.push(`   - ${p}`)
      }
      return out.join("\n")
    }
  },
  check_app_permissions: {
    params: ["app_name"],
    run: (s, a) => {
      const name = a["app_name"]
      const app = appOf(s, name)
      if (app === undefined) return `App '${pyStr(name)}' not found on this phone.`
      const allowed = permissionNames.filter((p) => app.permissions[p])
      return allowed.length === 0
        ? `App '${pyStr(name)}' currently has no permissions granted.`
        : `App '${pyStr(name)}' has permission for: ${allowed.join(", ")}.`
    }
  },
  grant_app_permission: {
    params: ["app_name", "permission"],
    run: (s, a) => {
      const name = a["app_name"]
      const app = appOf(s, name)
      const given = a["permission"]
      if (typeof given !== "string") return raise(`'${typeName(given)}' object has no attribute 'lower'`)
      const permission = given.toLowerCase()
      let ok: boolean
      let message: string
      if (app === undefined) {
        ok = false
        message = `App '${pyStr(name)}' not found. Cannot grant permission.`
      } else if (!(permissionNames as ReadonlyArray<string>).includes(permission)) {
        ok = false
        message = `Permission '${permission}' not tracked for app '${pyStr(name)}', available permissions: [${permissionNames.map(reprStr).join(", ")}]`
      } else {
        app.permissions[permission as (typeof permissionNames)[number]] = true
        ok = true
        message = `Permission '${permission}' granted to app '${pyStr(name)}'.`
      }
      return withBar(s, `${ok ? "Success. " : "Error. "}${message}`)
    }
  },
  can_send_mms: {
    params: [],
    run: (s) => (canSendMms(s) ? "Your messaging app can send MMS messages." : "Your messaging app cannot send MMS messages.")
  },
  reboot_device: {
    params: [],
    run: (s) => {
      const out: Array<string> = []
      if (s.device.active_apn_settings.reset_at_reboot) {
        out.push("Resetting APN settings...")
        s.device.active_apn_settings = defaultApn()
      }
      out.push("Restarting network services...")
      s.device.network_connection_status = "searching"
      simulateNetworkSearch(s)
      return withBar(s, out.join("\n"))
    }
  },
  check_payment_request: {
    params: [],
    run: (s) => {
      const p = s.surroundings.payment_request
      return p === null ? "No payment request has been made." : `You have a payment request for bill ${p.bill_id} of ${reprFloat(p.amount_due)} USD.`
    }
  },
  make_payment: {
    params: [],
    run: (s) => {
      const p = s.surroundings.payment_request
      if (p === null) return "You do not have a payment request."
      p.paid = true
      return `Payment of ${reprFloat(p.amount_due)} USD has been made for bill ${p.bill_id}.`
    }
  }
}

const userFunctions: Record<string, Implementation> = {
  set_user_info: {
    params: ["name", "phone_number"],
    run: (s, a) => {
      s.surroundings.name = a["name"] as string
      s.surroundings.phone_number = a["phone_number"] as string
      return "None"
    }
  },
  set_user_location: {
    params: ["abroad"],
    run: (s, a) => {
      s.surroundings.is_abroad = a["abroad"] === true
      return "None"
    }
  },
  turn_airplane_mode_on: {
    params: [],
    run: (s) => {
      if (!toggleAirplane(s)) toggleAirplane(s)
      return "Airplane Mode is now ON."
    }
  },
  turn_airplane_mode_off: {
    params: [],
    run: (s) => {
      if (toggleAirplane(s)) toggleAirplane(s)
      return "Airplane Mode is now OFF."
    }
  },
  simulate_network_search: {
    params: [],
    run: (s) => {
      simulateNetworkSearch(s)
      return "None"
    }
  },
  unseat_sim_card: {
    params: [],
    run: (s) => {
      s.device.sim_card_missing = true
      simulateNetworkSearch(s)
      return "SIM card un-seated successfully."
    }
  },
  lock_sim_card: {
    params: ["mode"],
    run: (s, a) => {
      const mode = a["mode"]
      if (mode === "pin") s.device.sim_card_status = "locked_pin"
      else if (mode === "puk") s.device.sim_card_status = "locked_puk"
      simulateNetworkSearch(s)
      return `SIM card locked successfully in ${pyStr(mode)} mode.`
    }
  },
  turn_data_on: {
    params: [],
    run: (s) => {
      s.device.data_enabled = true
      return "Data connection restored."
    }
  },
  turn_data_off: toggledTo(toggleData, false, "Data connection broken."),
  turn_roaming_on: toggledTo(toggleRoaming, true, "Data Roaming is now ON."),
  turn_roaming_off: toggledTo(toggleRoaming, false, "Data Roaming is now OFF."),
  turn_data_saver_mode_on: toggledTo(toggleDataSaver, true, "Data Saver Mode is now ON."),
  turn_data_saver_mode_off: toggledTo(toggleDataSaver, false, "Data Saver Mode is now OFF."),
  break_apn_settings: {
    params: [],
    run: (s) => {
      s.device.active_apn_settings.apn_name = "broken"
      simulateNetworkSearch(s)
      return "APN settings broken. Please call reset_apn_settings() to fix."
    }
  },
  break_apn_mms_setting: {
    params: [],
    run: (s) => {
      s.device.active_apn_settings.mmsc_url = null
      return "APN MMS setting broken. Please call reset_apn_settings() to fix."
    }
  },
  set_wifi_calling: {
    params: ["enabled", "mms_over_wifi"],
    defaults: { mms_over_wifi: null },
    run: (s, a) => {
      const enabled = a["enabled"] === true
      if (s.device.wifi_calling_enabled !== enabled) toggleWifiCalling(s)
      let msg = `Wi-Fi Calling is now ${enabled ? "ON" : "OFF"}.`
      const mms = a["mms_over_wifi"]
      if (mms !== null && mms !== undefined) {
        s.device.wifi_calling_mms_over_wifi = mms === true
        msg += `\nMMS over Wi-Fi is now ${mms === true ? "ON" : "OFF"}.`
      }
      return msg
    }
  },
  remove_app_permission: {
    params: ["app_name", "permission"],
    run: (s, a) => {
      const app = appOf(s, a["app_name"])
      const permission = String(a["permission"]).toLowerCase()
      if (app === undefined) return "False"
      if (!(permissionNames as ReadonlyArray<string>).includes(permission)) return "False"
      app.permissions[permission as (typeof permissionNames)[number]] = false
      return "True"
    }
  },
  break_vpn: {
    params: [],
    run: (s) => {
      connectVpn(s)
      // vpn_details is the shared default object: degrading it degrades the default too.
      s.env.default_vpn.server_performance = "poor"
      if (s.device.vpn_details !== null) s.device.vpn_details.server_performance = "poor"
      return "VPN connection broken."
    }
  },
  assert_airplane_mode_status: { params: ["expected_status"], run: (s, a) => pyBool(s.device.airplane_mode === a["expected_status"]) },
  assert_service_status: {
    params: ["expected_status"],
    run: (s, a) => {
      const v = a["expected_status"]
      if (typeof v !== "string" || !(enums.NetworkStatus as ReadonlyArray<string>).includes(v)) raise(`${pyReprArg(v)} is not a valid NetworkStatus`)
      return pyBool(s.device.network_connection_status === v)
    }
  },
  assert_mobile_data_status: { params: ["expected_status"], run: (s, a) => pyBool(mobileDataWorking(s) === a["expected_status"]) },
  assert_mobile_roaming_status: { params: ["expected_status"], run: (s, a) => pyBool(s.device.roaming_enabled === a["expected_status"]) },
  assert_mobile_data_saver_mode_status: {
    params: ["expected_status"],
    run: (s, a) => pyBool(s.device.data_saver_mode === a["expected_status"])
  },
  assert_internet_speed: {
    params: ["expected_speed", "expected_desc"],
    defaults: { expected_desc: null },
    run: (s, a) => {
      const [speed, desc] = speedTest(s)
      const ok = (speed ?? 0.0) >= numberOf(a["expected_speed"])
      const expectedDesc = a["expected_desc"]
      if (expectedDesc === null || expectedDesc === undefined) return pyBool(ok)
      return pyBool(ok && desc.toLowerCase() === String(expectedDesc).toLowerCase())
    }
  },
  assert_internet_not_excellent: { params: [], run: (s) => pyBool(speedTest(s)[1].toLowerCase() !== "excellent") },
  assert_can_send_mms: { params: ["expected_status"], run: (s, a) => pyBool(canSendMms(s) === a["expected_status"]) },
  assert_mobile_data_usage_exceeded: {
    params: ["expected_status"],
    run: (s, a) => pyBool(s.surroundings.mobile_data_usage_exceeded === a["expected_status"])
  }
}

const pyReprArg = (v: PyJson | undefined): string => (typeof v === "string" ? reprStr(v) : pyStr(v))

// -- TelecomEnvironment.sync_tools -------------------------------------------------------------------

/** Copy line status, roaming and data-limit state into the surroundings; settle payment requests. */
export const sync = (s: Session): void => {
  const u = s.surroundings
  if (u.phone_number === null) return
  const phone = u.phone_number
  const line = lineByPhone(s, phone)
  u.line_active = line.status === "Active"
  u.roaming_allowed = line.roaming_enabled
  const plan = planById(s, line.plan_id)
  u.mobile_data_usage_exceeded = line.data_used_gb >= plan.data_limit_gb + line.data_refueling_gb
  if (u.payment_request !== null && u.payment_request.paid) {
    s.edit("bills", billById(s, u.payment_request.bill_id)).status = "Paid"
    u.payment_request = null
  }
  if (u.payment_request === null) {
    const awaiting = awaitingPayment(s, customerByPhone(s, phone))
    const first = awaiting[0]
    if (first !== undefined) u.payment_request = { bill_id: first.bill_id, amount_due: first.total_due, paid: false }
  }
}

// -- calls -------------------------------------------------------------------------------------------

const quoteList = (names: ReadonlyArray<string>): string => {
  const q = names.map((n) => `'${n}'`)
  if (q.length === 1) return q[0]!
  if (q.length === 2) return `${q[0]} and ${q[1]}`
  return `${q.slice(0, -1).join(", ")}, and ${q[q.length - 1]}`
}

/** Python's keyword binding of `method(**args)`: the TypeError text, or the arguments with defaults. */
const bind = (owner: string, name: string, impl: Implementation, args: Args): Args | string => {
  const fn = `${owner}.${name}()`
  for (const k of Object.keys(args)) if (!impl.params.includes(k)) return `${fn} got an unexpected keyword argument '${k}'`
  const defaults = impl.defaults ?? {}
  const missing = impl.params.filter((p) => !(p in args) && !(p in defaults))
  if (missing.length > 0) {
    return `${fn} missing ${missing.length} required positional argument${missing.length > 1 ? "s" : ""}: ${quoteList(missing)}`
  }
  return { ...defaults, ...args }
}

const toolkits = {
  assistant: { owner: "TelecomTools", tools: agentTools, functions: agentFunctions },
  user: { owner: "TelecomUserTools", tools: userTools, functions: userFunctions }
} as const

/** Names of the tools each side is offered, in upstream order. */
export const agentToolNames: ReadonlyArray<string> = Object.keys(agentTools)
export const userToolNames: ReadonlyArray<string> = Object.keys(userTools)

export interface CallOutcome extends Tool.ToolOutcome {
  /** The world after the call: `world` with `writes` applied. */
  readonly world: World.World
}

const run = (
  world: World.World,
  impl: Implementation | undefined,
  owner: string,
  name: string,
  args: Args,
  options: ToolOptions,
  missing: string
): CallOutcome => {
  const s = new Session(world, options)
  let output: string
  let error = false
  try {
    if (impl === undefined) raise(missing)
    const bound = bind(owner, name, impl!, args)
    if (typeof bound === "string") raise(bound)
    output = impl!.run(s, bound as Args)
    sync(s)
  } catch (e) {
    // Only Python's exceptions become answers; a bug in the transcription stays a defect.
    if (!(e instanceof Raise)) throw e
    output = `Error: ${e.text}`
    error = true
  }
  const writes = s.writes()
  return { output, error, writes, world: World.apply(world, writes) }
}

/**
 * `Environment.get_response(ToolCall(name, arguments, requestor))`: the requestor's toolkit
 * only, the answer as the tool message content, then `sync_tools()` unless the call raised.
 */
export const call = (world: World.World, name: string, requestor: Requestor, args: Args, options: ToolOptions = counterBillIds): CallOutcome => {
  const kit = toolkits[requestor]
  const impl = Object.hasOwn(kit.tools, name) ? kit.tools[name] : undefined
  return run(world, impl, kit.owner, name, args, options, `Tool '${name}' not found.`)
}

/**
 * `Environment.make_tool_call` without the sync: what upstream's evaluator does when it replays
 * the gold actions (EnvironmentEvaluator.calculate_reward).
 */
export const callWithoutSync = (
  world: World.World,
  name: string,
  requestor: Requestor,
  args: Args,
  options: ToolOptions = counterBillIds
): CallOutcome => {
  const kit = toolkits[requestor]
  const impl = Object.hasOwn(kit.tools, name) ? kit.tools[name] : undefined
  const s = new Session(world, options)
  let output: string
  let error = false
  try {
    if (impl === undefined) raise(`Tool '${name}' not found.`)
    const bound = bind(kit.owner, name, impl!, args)
    if (typeof bound === "string") raise(bound)
    output = impl!.run(s, bound as Args)
  } catch (e) {
    if (!(e instanceof Raise)) throw e
    output = `Error: ${e.text}`
    error = true
  }
  const writes = s.writes()
  return { output, error, writes, world: World.apply(world, writes) }
}

/**
 * `Environment.run_env_function_call`: any method of either toolkit by name (tools, scene
 * setters, assertions), then `sync_tools()`. Upstream lets an exception escape; here it is an
 * error outcome (`output` "Error: ..."), with the writes made before it.
 */
export const runEnvFunction = (
  world: World.World,
  envType: Requestor,
  funcName: string,
  args: Args,
  options: ToolOptions = counterBillIds
): CallOutcome => {
  const kit = toolkits[envType]
  const impl = Object.hasOwn(kit.tools, funcName) ? kit.tools[funcName] : Object.hasOwn(kit.functions, funcName) ? kit.functions[funcName] : undefined
  return run(world, impl, kit.owner, funcName, args, options, `'${kit.owner}' object has no attribute '${funcName}'`)
}

/**
 * A call whose arguments are the model's raw JSON text, parsed as Python's json.loads would
 * (floats marked), so `2.0` stays a float. Text that is not a JSON object is answered as
 * upstream's orchestrator would not let it through: an error outcome naming the problem.
 */
export const callRaw = (
  world: World.World,
  name: string,
  requestor: Requestor,
  argumentsText: string,
  options: ToolOptions = counterBillIds
): CallOutcome => {
  const parsed = parsePyJson(argumentsText)
  if (parsed._tag === "Left" || parsed.right === null || typeof parsed.right !== "object" || Array.isArray(parsed.right) || isPyFloat(parsed.right)) {
    return { output: `Error: arguments are not a JSON object: ${argumentsText}`, error: true, writes: [], world }
  }
  return call(world, name, requestor, parsed.right as Args, options)
}

/** Plain JSON arguments (as a `Tool` receives them) with floats unmarked: integral numbers are ints. */
export const argsFromJson = (args: { readonly [key: string]: Canonical.Json }): Args => args as Args

/**
 * The tools of one side as `Tool`s, in the order and with the specs given (tools.json or
 * user-tools.json); `write` access for write tools. A call that carries the model's arguments
 * text runs through `callRaw`, so `2.0` stays a float (refuel_data prints "2.0 GB" as upstream);
 * without it the JSON arguments are all there is, and an integral number is an int.
 */
export const makeTelecomTools = (
  requestor: Requestor,
  specs: ReadonlyArray<Tool.ToolSpec>,
  types: ReadonlyArray<{ readonly name: string; readonly type: string }>,
  options: ToolOptions = counterBillIds
): ReadonlyArray<Tool.Tool> =>
  specs.map((spec) => {
    const type = types.find((t) => t.name === spec.name)?.type ?? "write"
    return {
      spec,
      access: type === "write" ? "write" : "read",
      run: (world, args, argumentsText) => {
        const { output, error, writes } = argumentsText !== undefined
          ? callRaw(world, spec.name, requestor, argumentsText, options)
          : call(world, spec.name, requestor, argsFromJson(args), options)
        return { output, error, writes }
      }
    }
  })

/** `TelecomEnvironment.sync_tools()` on its own, as `set_state` runs it once more at the end. */
export const syncEnvironment = (world: World.World, options: ToolOptions = counterBillIds): CallOutcome => {
  const s = new Session(world, options)
  let output = ""
  let error = false
  try {
    sync(s)
  } catch (e) {
    if (!(e instanceof Raise)) throw e
    output = `Error: ${e.text}`
    error = true
  }
  const writes = s.writes()
  return { output, error, writes, world: World.apply(world, writes) }
}
