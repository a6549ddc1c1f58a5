/**
 * Upstream's telecom models (src/tau2/domains/telecom/data_model.py, user_data_model.py) as
 * plain records in pydantic field order, every default filled, so a record's keys are what
 * `model_dump()` lists. Dates are kept as Python's `str()` of them ("2025-01-20",
 * "2025-01-20 14:30:00"): every output and both hashes print them that way (`default=str`).
 * Enums are kept as their values. Numbers are JS numbers; the dump functions mark the fields
 * pydantic holds as floats, so `json.dumps` text matches byte for byte.
 */
import { Either } from "effect"
import type { Canonical } from "../../../src/index.ts"
import { dict, float, type PyValue } from "../common/pyjson.ts"
import { isPyFloat, type PyJson } from "./pyjsonParse.ts"

// -- agent DB ------------------------------------------------------------------------------------

export interface Plan {
  plan_id: string
  name: string
  data_limit_gb: number
  price_per_month: number
  data_refueling_price_per_gb: number
}

export interface Device {
  device_id: string
  device_type: string
  model: string
  imei: string | null
  is_esim_capable: boolean
  activated: boolean
  activation_date: string | null
  last_esim_transfer_date: string | null
}

export type LineStatus = "Active" | "Suspended" | "Pending Activation" | "Closed"

export interface Line {
  line_id: string
  phone_number: string
  status: LineStatus
  plan_id: string
  device_id: string | null
  data_used_gb: number
  data_refueling_gb: number
  roaming_enabled: boolean
  contract_end_date: string | null
  last_plan_change_date: string | null
  last_sim_replacement_date: string | null
  suspension_start_date: string | null
}

export interface LineItem {
  description: string
  amount: number
  date: string
  item_type: string
}

export type BillStatus = "Draft" | "Issued" | "Awaiting Payment" | "Paid" | "Overdue" | "Disputed"

export interface Bill {
  bill_id: string
  customer_id: string
  period_start: string
  period_end: string
  issue_date: string
  total_due: number
  due_date: string
  line_items: Array<LineItem>
  status: BillStatus
}

export interface Customer {
  customer_id: string
  full_name: string
  date_of_birth: string
  email: string
  phone_number: string
  address: { street: string; city: string; state: string; zip_code: string }
  account_status: string
  payment_methods: Array<{ method_type: string; account_number_last_4: string; expiration_date: string }>
  line_ids: Array<string>
  bill_ids: Array<string>
  created_at: string
  last_extension_date: string | null
  goodwill_credit_used_this_year: number
}

/** The agent DB's tables, in `TelecomDB` field order, with each record's key field. */
export const agentTables = [
  ["plans", "plan_id"],
  ["customers", "customer_id"],
  ["lines", "line_id"],
  ["bills", "bill_id"],
  ["devices", "device_id"]
] as const
export type AgentTable = (typeof agentTables)[number][0]

// -- user DB (the phone and the user's surroundings) ----------------------------------------------

export interface ApnSettings {
  apn_name: string
  reset_at_reboot: boolean
  mms_apn: string | null
  mmsc_url: string | null
  mms_proxy: string | null
  mms_port: number | null
}

export interface VpnDetails {
  server_address: string | null
  protocol: string | null
  server_performance: string
}

export interface AppPermissions {
  sms: boolean
  storage: boolean
  phone: boolean
  network: boolean
}

export interface AppStatus {
  app_name: string
  permissions: AppPermissions
}

export interface PhoneDevice {
  sim_card_status: string
  sim_card_missing: boolean
  airplane_mode: boolean
  network_signal_strength: string
  network_technology_connected: string
  network_connection_status: string
  battery_level: number
  data_enabled: boolean
  roaming_enabled: boolean
  network_mode_preference: string
  active_apn_settings: ApnSettings
  wifi_enabled: boolean
  wifi_connected: boolean
  wifi_ssid: string | null
  wifi_signal_strength: string
  wifi_calling_enabled: boolean
  wifi_calling_mms_over_wifi: boolean
  data_saver_mode: boolean
  vpn_enabled_setting: boolean
  vpn_connected: boolean
  vpn_details: VpnDetails | null
  app_statuses: Record<string, AppStatus>
}

export interface PaymentRequest {
  bill_id: string
  amount_due: number
  paid: boolean
}

export interface Surroundings {
  name: string | null
  phone_number: string | null
  is_abroad: boolean
  roaming_allowed: boolean
  signal_strength: Record<string, string>
  mobile_data_usage_exceeded: boolean
  line_active: boolean
  payment_request: PaymentRequest | null
}

/** The user DB lives in table `user`, keys `device` and `surroundings`. */
export const userTable = "user"

/**
 * State upstream keeps outside both DBs, which the tools still read: the count of
 * `uuid.uuid4()` calls (pinned to a counter, oracle README) and the class-level default VPN
 * details object that `connect_vpn` aliases and `break_vpn` mutates.
 */
export interface EnvState {
  uuid_calls: number
  default_vpn: VpnDetails
}
export const envTable = "env"
export const envKey = "state"

export const pristineVpn = (): VpnDetails => ({ server_address: "192.168.1.1", protocol: "OpenVPN", server_performance: "excellent" })

export const defaultApn = (): ApnSettings => ({
  apn_name: "internet",
  reset_at_reboot: false,
  mms_apn: "mms",
  mmsc_url: "http://mms.carrier.com/mms/wapenc",
  mms_proxy: null,
  mms_port: null
})

export const defaultSurroundings = (): Surroundings => ({
  name: null,
  phone_number: null,
  is_abroad: false,
  roaming_allowed: false,
  signal_strength: { "2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent" },
  mobile_data_usage_exceeded: false,
  line_active: true,
  payment_request: null
})

export const enums = {
  DeviceType: ["phone", "router", "tablet", "watch", "other"],
  LineStatus: ["Active", "Suspended", "Pending Activation", "Closed"],
  BillStatus: ["Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed"],
  AccountStatus: ["Active", "Suspended", "Pending Verification", "Closed"],
  PaymentMethodType: ["Credit Card", "Debit Card", "PayPal"],
  SimStatus: ["active", "missing", "locked_pin", "locked_puk"],
  NetworkTechnology: ["none", "2G", "3G", "4G", "5G"],
  NetworkModePreference: ["4g_5g_preferred", "4g_only", "3g_only", "2g_only"],
  SignalStrength: ["none", "poor", "fair", "good", "excellent"],
  PerformanceLevel: ["unknown", "poor", "fair", "good", "excellent"],
  NetworkStatus: ["connected", "searching", "no_service", "emergency_only"],
  APNNames: ["internet", "broken"]
} as const

// -- decoding (pydantic's model_validate of the loaded TOML) ---------------------------------------

type Fields = Readonly<Record<string, PyJson>>
type Spec =
  | "str"
  | "str?"
  | "int"
  | "int?"
  | "float"
  | "bool"
  | "date"
  | "date?"
  | "datetime"
  | "datetime?"
  | "strs"
  | { readonly enum: ReadonlyArray<string> }

const isObject = (v: PyJson | undefined): v is Fields =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !isPyFloat(v)

const DATE = /^\d{4}-\d{2}-\d{2}$/
const DATETIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?$/

/** One field by its pydantic type; Left is the problem. */
const field = (where: string, v: PyJson | undefined, spec: Spec): Either.Either<Canonical.Json, string> => {
  const bad = () => Either.left(`${where}: ${JSON.stringify(v)} is not a valid ${typeof spec === "string" ? spec : "enum value"}`)
  if (typeof spec === "object") return typeof v === "string" && spec.enum.includes(v) ? Either.right(v) : bad()
  const optional = spec.endsWith("?")
  if (optional && (v === undefined || v === null)) return Either.right(null)
  const base = optional ? spec.slice(0, -1) : spec
  switch (base) {
    case "str":
      return typeof v === "string" ? Either.right(v) : bad()
    case "int":
      return typeof v === "number" && Number.isInteger(v) ? Either.right(v) : bad()
    case "float":
      return typeof v === "number" ? Either.right(v) : isPyFloat(v) ? Either.right(v.value) : bad()
    case "bool":
      return typeof v === "boolean" ? Either.right(v) : bad()
    case "date":
      return typeof v === "string" && DATE.test(v) ? Either.right(v) : bad()
    case "datetime": {
      const m = typeof v === "string" ? DATETIME.exec(v) : null
      // str(datetime): a space between date and time, seconds always shown.
      return m === null ? bad() : Either.right(`${m[1]} ${m[2]}${m[3] ?? ":00"}`)
    }
    case "strs":
      return Array.isArray(v) && v.every((x) => typeof x === "string") ? Either.right(v as ReadonlyArray<string>) : bad()
  }
  return bad()
}

/** A model: declared fields in order, defaults for the missing ones, no extra field (extra="forbid"). */
const model = (
  where: string,
  v: PyJson | undefined,
  fields: ReadonlyArray<readonly [string, Spec | ((where: string, v: PyJson | undefined) => Either.Either<Canonical.Json, string>), Canonical.Json?]>
): Either.Either<{ [key: string]: Canonical.Json }, string> => {
  if (!isObject(v)) return Either.left(`${where}: not a table`)
  for (const k of Object.keys(v)) if (!fields.some(([name]) => name === k)) return Either.left(`${where}: unexpected field ${k}`)
  const out: { [key: string]: Canonical.Json } = {}
  for (const entry of fields) {
    const [name, spec] = entry
    const given = v[name]
    if (given === undefined && entry.length === 3) {
      out[name] = entry[2] as Canonical.Json
      continue
    }
    if (given === undefined && typeof spec === "string" && !spec.endsWith("?")) return Either.left(`${where}.${name}: missing`)
    const decoded = typeof spec === "function" ? spec(`${where}.${name}`, given) : field(`${where}.${name}`, given, spec)
    if (Either.isLeft(decoded)) return Either.left(decoded.left)
    out[name] = decoded.right
  }
  return Either.right(out)
}

const list = (
  decode: (where: string, v: PyJson | undefined) => Either.Either<{ [key: string]: Canonical.Json }, string>
) => (where: string, v: PyJson | undefined): Either.Either<Canonical.Json, string> => {
  if (v === undefined) return Either.right([])
  if (!Array.isArray(v)) return Either.left(`${where}: not a list`)
  const out: Array<Canonical.Json> = []
  for (let i = 0; i < v.length; i++) {
    const d = decode(`${where}[${i}]`, v[i])
    if (Either.isLeft(d)) return d
    out.push(d.right)
  }
  return Either.right(out)
}

export const decodePlan = (w: string, v: PyJson | undefined) =>
  model(w, v, [
    ["plan_id", "str"],
    ["name", "str"],
    ["data_limit_gb", "float"],
    ["price_per_month", "float"],
    ["data_refueling_price_per_gb", "float"]
  ])

export const decodeDevice = (w: string, v: PyJson | undefined) =>
  model(w, v, [
    ["device_id", "str"],
    ["device_type", { enum: enums.DeviceType }],
    ["model", "str"],
    ["imei", "str?", null],
    ["is_esim_capable", "bool"],
    ["activated", "bool", false],
    ["activation_date", "datetime?", null],
    ["last_esim_transfer_date", "datetime?", null]
  ])

export const decodeLine = (w: string, v: PyJson | undefined) =>
  model(w, v, [
    ["line_id", "str"],
    ["phone_number", "str"],
    ["status", { enum: enums.LineStatus }, "Pending Activation"],
    ["plan_id", "str"],
    ["device_id", "str?", null],
    ["data_used_gb", "float", 0],
    ["data_refueling_gb", "float", 0],
    ["roaming_enabled", "bool", false],
    ["contract_end_date", "date?", null],
    ["last_plan_change_date", "date?", null],
    ["last_sim_replacement_date", "date?", null],
    ["suspension_start_date", "date?", null]
  ])

const decodeLineItem = (w: string, v: PyJson | undefined) =>
  model(w, v, [
    ["description", "str"],
    ["amount", "float"],
    ["date", "date"],
    ["item_type", "str"]
  ])

export const decodeBill = (w: string, v: PyJson | undefined) =>
  model(w, v, [
    ["bill_id", "str"],
    ["customer_id", "str"],
    ["period_start", "date"],
    ["period_end", "date"],
    ["issue_date", "date"],
    ["total_due", "float"],
    ["due_date", "date"],
    ["line_items", list(decodeLineItem), []],
    ["status", { enum: enums.BillStatus }, "Draft"]
  ])

export const decodeCustomer = (w: string, v: PyJson | undefined) =>
  model(w, v, [
    ["customer_id", "str"],
    ["full_name", "str"],
    ["date_of_birth", "str"],
    ["email", "str"],
    ["phone_number", "str"],
    [
      "address",
      (ww, vv) =>
        model(ww, vv, [
          ["street", "str"],
          ["city", "str"],
          ["state", "str"],
          ["zip_code", "str"]
        ])
    ],
    ["account_status", { enum: enums.AccountStatus }, "Pending Verification"],
    [
      "payment_methods",
      list((ww, vv) =>
        model(ww, vv, [
          ["method_type", { enum: enums.PaymentMethodType }],
          ["account_number_last_4", "str"],
          ["expiration_date", "str"]
        ])
      ),
      []
    ],
    ["line_ids", "strs", []],
    ["bill_ids", "strs", []],
    // The default is a date (DEFAULT_START_DATE), never validated: str() gives "2025-01-01".
    ["created_at", "datetime", "2025-01-01"],
    ["last_extension_date", "date?", null],
    ["goodwill_credit_used_this_year", "float", 0]
  ])

export const decodeApn = (w: string, v: PyJson | undefined) =>
  model(w, v, [
    ["apn_name", { enum: enums.APNNames }, "internet"],
    ["reset_at_reboot", "bool", false],
    ["mms_apn", "str?", "mms"],
    ["mmsc_url", "str?", "http://mms.carrier.com/mms/wapenc"],
    ["mms_proxy", "str?", null],
    ["mms_port", "int?", null]
  ])

const decodeVpn = (w: string, v: PyJson | undefined) =>
  v === null || v === undefined
    ? Either.right(null)
    : model(w, v, [
        ["server_address", "str?", null],
        ["protocol", "str?", null],
        ["server_performance", { enum: enums.PerformanceLevel }, "unknown"]
      ])

const decodeApps = (w: string, v: PyJson | undefined): Either.Either<Canonical.Json, string> => {
  if (v === undefined) {
    return Either.right({
      messaging: { app_name: "messaging", permissions: { sms: true, storage: true, phone: true, network: false } },
      browser: { app_name: "browser", permissions: { sms: false, storage: true, phone: false, network: true } }
    })
  }
  if (!isObject(v)) return Either.left(`${w}: not a table`)
  const out: { [key: string]: Canonical.Json } = {}
  for (const [name, app] of Object.entries(v)) {
    const d = model(`${w}.${name}`, app, [
      ["app_name", "str"],
      [
        "permissions",
        (ww, vv) =>
          model(ww, vv ?? {}, [
            ["sms", "bool", false],
            ["storage", "bool", false],
            ["phone", "bool", false],
            ["network", "bool", false]
          ])
      ]
    ])
    if (Either.isLeft(d)) return d
    out[name] = d.right
  }
  return Either.right(out)
}

export const decodePhone = (w: string, v: PyJson | undefined) =>
  model(w, v ?? {}, [
    ["sim_card_status", { enum: enums.SimStatus }, "active"],
    ["sim_card_missing", "bool", false],
    ["airplane_mode", "bool", false],
    ["network_signal_strength", { enum: enums.SignalStrength }, "good"],
    ["network_technology_connected", { enum: enums.NetworkTechnology }, "5G"],
    ["network_connection_status", { enum: enums.NetworkStatus }, "connected"],
    ["battery_level", "int", 80],
    ["data_enabled", "bool", true],
    ["roaming_enabled", "bool", false],
    ["network_mode_preference", { enum: enums.NetworkModePreference }, "4g_5g_preferred"],
    ["active_apn_settings", (ww, vv) => decodeApn(ww, vv ?? {})],
    ["wifi_enabled", "bool", false],
    ["wifi_connected", "bool", false],
    ["wifi_ssid", "str?", null],
    ["wifi_signal_strength", { enum: enums.SignalStrength }, "none"],
    ["wifi_calling_enabled", "bool", false],
    ["wifi_calling_mms_over_wifi", "bool", false],
    ["data_saver_mode", "bool", false],
    ["vpn_enabled_setting", "bool", false],
    ["vpn_connected", "bool", false],
    ["vpn_details", decodeVpn],
    ["app_statuses", decodeApps]
  ])

// -- dumps: model_dump() as Python values (floats marked) -----------------------------------------

const withFloats = (record: object, floats: ReadonlyArray<string>, nested: Readonly<Record<string, (v: never) => PyValue>> = {}): PyValue =>
  dict(
    Object.entries(record).map(([k, v]) => {
      if (floats.includes(k)) return [k, float(v as number)] as const
      const dump = nested[k]
      return [k, dump !== undefined ? dump(v as never) : plain(v as Canonical.Json)] as const
    })
  )

/** JSON as a Python value: dicts keep their order, numbers stay ints. */
export const plain = (v: Canonical.Json): PyValue => {
  if (v === null || typeof v !== "object") return v
  if (Array.isArray(v)) return v.map(plain)
  return dict(Object.entries(v).map(([k, x]) => [k, plain(x as Canonical.Json)] as const))
}

export const dumpPlan = (p: Plan): PyValue => withFloats(p, ["data_limit_gb", "price_per_month", "data_refueling_price_per_gb"])
export const dumpDevice = (d: Device): PyValue => plain(d as unknown as Canonical.Json)
export const dumpLine = (l: Line): PyValue => withFloats(l, ["data_used_gb", "data_refueling_gb"])
export const dumpBill = (b: Bill): PyValue =>
  withFloats(b, ["total_due"], { line_items: (items: ReadonlyArray<LineItem>) => items.map((i) => withFloats(i, ["amount"])) })
export const dumpCustomer = (c: Customer): PyValue => withFloats(c, ["goodwill_credit_used_this_year"])
export const dumpPhone = (d: PhoneDevice): PyValue => plain(d as unknown as Canonical.Json)
export const dumpSurroundings = (s: Surroundings): PyValue =>
  withFloats(s, [], { payment_request: (p: PaymentRequest | null) => (p === null ? null : withFloats(p, ["amount_due"])) })

export const agentDumps: Readonly<Record<AgentTable, (record: never) => PyValue>> = {
  plans: dumpPlan,
  customers: dumpCustomer,
  lines: dumpLine,
  bills: dumpBill,
  devices: dumpDevice
}

export const asJson = (v: object): Canonical.Json => v as unknown as Canonical.Json
