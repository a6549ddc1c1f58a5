/**
 * The banking_knowledge tools of upstream src/tau2/domains/banking_knowledge/tools.py (bm25
 * variant): the 15 agent tools (KB_search first), the 6 user tools, and the discoverable tools
 * (agent ones reached through unlock/call, user ones through give/call), as pure functions of
 * the world. Each answers what `Environment.get_response` sends back: the method's string, or
 * `Error: <exception>` with `error: true` when the method raises (unknown tool names).
 *
 * Upstream keeps one piece of state outside the DB: the agent's unlocked tools (and the task's
 * read-log allowlist). Both live in the world's `$session` table, which no DB hash covers;
 * `dbWorld` drops it before the DB check.
 */
import { Either } from "effect"
import { type Tool, World } from "../../../src/index.ts"
import { formatResults, search } from "./bm25.ts"
import type { BankingData, DiscoverableTool } from "./data.ts"
import { asKey, bind, dumpsIndent2, inList, inNames, p, PyException, pyContains, pyFloatOf, pyIterate, pyJoin, raise, type Param } from "./python.ts"
import { formatFixed, isDict, jsonLoads, num, orderedEntries, pyFloat, pyRepr, pyStr, pyType as pyTypeName, truthy, type Py } from "./pyvalue.ts"
import { accountBalance, type Args, Ctx, deterministicId, dumpsSorted, type Environment, f2, fieldQuery, NOW_ISO, queryDatabaseTool, type Rec, type Requestor, SESSION, sha256hex, title, TODAY } from "./context.ts"
export { type Args, dbWorld, deterministicId, type Environment, parseBalance, type Requestor, SESSION, withReadLogAllowlist } from "./context.ts"

interface Implementation {
  readonly params: ReadonlyArray<Param>
  readonly run: (ctx: Ctx, a: Args) => string
}

interface DiscoverableImpl extends Implementation {
  readonly mutates: boolean
}

const unlocked = (ctx: Ctx, name: string) => ctx.has(SESSION, `unlocked:${name}`)
const allowlist = (ctx: Ctx): ReadonlyArray<string> => (World.get(ctx.world, SESSION, "read_log_allowlist") as ReadonlyArray<string> | undefined) ?? []

const toolInfo = (ctx: Ctx, name: string) => ctx.env.discoverable.find((t) => t.name === name)!.tool_info

const formatToolForAgent = (info: DiscoverableTool["tool_info"]): string => {
  const params = Object.entries(info.parameters).map(
    ([n, d]) => `  - ${n}: ${d.type}${d.required ? " (required)" : " (optional)"} - ${d.description}`
  )
  return `Tool: ${info.name}\nDescription: ${info.description}\nParameters:\n${params.length > 0 ? params.join("\n") : "  (no parameters)"}`
}

const TRANSFER_REASONS = [
  "fraud_or_security_concern",
  "account_closure_request",
  "deceased_account_holder",
  "legal_or_regulatory_matter",
  "account_ownership_dispute",
  "complex_billing_dispute",
  "abusive_customer_behavior",
  "third_party_inquiry",
  "technical_system_error",
  "unconfirmed_external_communication",
  "customer_demands_after_unavailable_offer_refusal",
  "kb_search_unsuccessful_customer_requests_transfer",
  "specialized_department_required",
  "accessibility_or_special_needs",
  "customer_frustrated_demands_human",
  "supervisor_request_service_complaint",
  "customer_requests_human_no_specific_reason",
  "request_completed_customer_wants_human_followup",
  "other"
]

const s = (v: Py | undefined) => pyStr(v)

// -- agent tools -----------------------------------------------------------------------------------

const agentTools: Record<string, Implementation> = {
  KB_search: {
    params: [p("query")],
    run: (ctx, a) => {
      const q = a["query"]
      if (typeof q !== "string") return truthy(q) ? raise("AttributeError", `'${typeof q}' object has no attribute 'strip'`) : formatResults(ctx.env.index, [])
      return formatResults(ctx.env.index, search(ctx.env.index, q))
    }
  },
  transfer_to_human_agents: {
    params: [p("summary"), p("reason", "other")],
    run: (_ctx, a) =>
      inList(a["reason"], TRANSFER_REASONS)
        ? `Transfer successful (reason: ${s(a["reason"])}). A human agent will assist you shortly.`
        : `Error: Invalid transfer reason '${s(a["reason"])}'. Must be one of: ${TRANSFER_REASONS.join(", ")}`
  },
  get_current_time: { params: [], run: () => "The current time is 2025-11-14 03:40:00 EST." },
  get_user_information_by_id: { params: [p("user_id")], run: (ctx, a) => queryDatabaseTool(ctx, "users", fieldQuery("user_id", a["user_id"])) },
  get_user_information_by_name: {
    params: [p("customer_name")],
    run: (ctx, a) => queryDatabaseTool(ctx, "users", fieldQuery("name", a["customer_name"]))
  },
  get_user_information_by_email: { params: [p("email")], run: (ctx, a) => queryDatabaseTool(ctx, "users", fieldQuery("email", a["email"])) },
  change_user_email: {
    params: [p("user_id"), p("new_email")],
    run: (ctx, a) => {
      const id = asKey(a["user_id"])
      if (id === undefined || ctx.update("users", id, { email: a["new_email"]! }) === undefined) return `Error: User with ID '${s(a["user_id"])}' not found.`
      return `Email updated successfully.\n  - User ID: ${s(a["user_id"])}\n  - New Email: ${s(a["new_email"])}`
    }
  },
  get_referrals_by_user: {
    params: [p("user_id")],
    run: (ctx, a) => queryDatabaseTool(ctx, "referrals", fieldQuery("referrer_id", a["user_id"]))
  },
  get_credit_card_transactions_by_user: {
    params: [p("user_id")],
    run: (ctx, a) => queryDatabaseTool(ctx, "credit_card_transaction_history", fieldQuery("user_id", a["user_id"]))
  },
  get_credit_card_accounts_by_user: {
    params: [p("user_id")],
    run: (ctx, a) => queryDatabaseTool(ctx, "credit_card_accounts", fieldQuery("user_id", a["user_id"]))
  },
  log_verification: {
    params: ["name", "user_id", "address", "email", "phone_number", "date_of_birth", "time_verified"].map((n) => p(n)),
    run: (ctx, a) => {
      const tv = a["time_verified"]
      if (typeof tv !== "string") return raise("AttributeError", `'${pyTypeName(tv)}' object has no attribute 'replace'`)
      const id = `${s(a["user_id"])}_${tv.replaceAll(" ", "_").replaceAll(":", "").replaceAll("-", "")}`
      const record: Rec = {
        name: a["name"]!,
        user_id: a["user_id"]!,
        address: a["address"]!,
        email: a["email"]!,
        phone_number: a["phone_number"]!,
        date_of_birth: a["date_of_birth"]!,
        time_verified: tv
      }
      if (!ctx.add("verification_history", id, record)) return "Failed to log verification: Record may already exist."
      return `Verification logged successfully.\n  - User: ${s(a["name"])} (ID: ${s(a["user_id"])})\n  - Verified at: ${tv}`
    }
  },
  give_discoverable_user_tool: {
    params: [p("discoverable_tool_name"), p("arguments", "{}")],
    run: (ctx, a) => {
      const name = a["discoverable_tool_name"]
      // hasattr(KnowledgeUserTools, name)
      if (typeof name !== "string") return raise("TypeError", `attribute name must be string, not '${pyTypeName(name)}'`)
      const impl = userDiscoverable[name]
      if (impl === undefined || !Object.hasOwn(userDiscoverable, name)) return `Error: Unknown discoverable tool '${name}'.`
      const parsed = loadsArg(a["arguments"], false)
      if (Either.isLeft(parsed)) return `Error: Invalid JSON in arguments: ${parsed.left}`
      const args = parsed.right
      const keys = isDict(args) ? orderedEntries(args).map(([k]) => k as Py) : pyIterate(args)
      for (const k of keys) if (!inNames(impl.params.map((x) => x.name), k) && k !== "self") return `Error: Unexpected parameter: ${s(k)}`
      const info = toolInfo(ctx, name)
      ctx.add("user_discoverable_tools", deterministicId(`user_discoverable_tool:${name}`), { tool_name: name, status: "GIVEN" })
      const argsStr = truthy(args) ? dumpsIndent2(args) : "(no arguments)"
      return (
        `Tool given to user: ${name}\nDescription: ${info.description}\nArguments: ${argsStr}\n\n` +
        `The user can now execute this action by calling \`call_discoverable_user_tool\` with discoverable_tool_name='${name}' and the same arguments.`
      )
    }
  },
  unlock_discoverable_agent_tool: {
    params: [p("agent_tool_name")],
    run: (ctx, a) => {
      const name = a["agent_tool_name"]
      if (!inNames(agentDiscoverableNames, name) || typeof name !== "string") return `Error: Unknown agent tool '${s(name)}'. This tool is not available.`
      const info = toolInfo(ctx, name)
      ctx.put(SESSION, `unlocked:${name}`, { unlocked_at: NOW_ISO })
      return (
        `Tool unlocked: ${name}\nDescription: ${info.description}\n\n${formatToolForAgent(info)}\n\n` +
        `You can now use this tool by calling \`call_discoverable_agent_tool\` with agent_tool_name='${name}' and the required arguments.`
      )
    }
  },
  call_discoverable_agent_tool: {
    params: [p("agent_tool_name"), p("arguments", "{}")],
    run: (ctx, a) => {
      const name = a["agent_tool_name"]
      if (!inNames(agentDiscoverableNames, name) || typeof name !== "string") return `Error: Unknown agent tool '${s(name)}'. This tool is not available.`
      if (!unlocked(ctx, name)) {
        return `Error: Tool '${name}' has not been unlocked. You must first use \`unlock_discoverable_agent_tool\` to unlock this tool before calling it.`
      }
      const parsed = loadsArg(a["arguments"], true)
      if (Either.isLeft(parsed)) return `Error: Invalid JSON in arguments: ${parsed.left}`
      const impl = agentDiscoverable[name]!
      let result: string
      try {
        if (!isDict(parsed.right)) raise("TypeError", `${MODULE}.KnowledgeTools.${name}() argument after ** must be a mapping, not ${pyTypeName(parsed.right)}`)
        result = impl.run(ctx, bind(`KnowledgeTools.${name}`, impl.params, parsed.right as Args))
      } catch (e) {
        if (e instanceof PyException && e.type === "TypeError") return `Error: Invalid arguments: ${e.text}`
        throw e
      }
      if (impl.mutates || allowlist(ctx).includes(name)) {
        ctx.add("agent_discoverable_tools", deterministicId(`agent_discoverable_tool:${name}`), { tool_name: name, status: "CALLED" })
      }
      return result
    }
  },
  list_discoverable_agent_tools: {
    params: [],
    run: (ctx) => `Your called agent tools:\n${queryDatabaseTool(ctx, "agent_discoverable_tools", "{}")}`
  }
}

/** The module upstream's tool classes live in (Python names it in some TypeError texts). */
const MODULE = "tau2.domains.banking_knowledge.tools"

const typeName = (v: Py): string => pyTypeName(v)

/** `json.loads(arguments[, parse_int=float])`; a non-string is Python's TypeError. */
const loadsArg = (v: Py | undefined, parseIntAsFloat: boolean): Either.Either<Py, string> => {
  if (typeof v !== "string") return raise("TypeError", `the JSON object must be str, bytes or bytearray, not ${typeName(v ?? null)}`)
  return jsonLoads(v, parseIntAsFloat)
}

// -- user tools ------------------------------------------------------------------------------------

const VALID_CREDIT_CARD_TYPES = [
  "Bronze Rewards Card",
  "Business Bronze Rewards Card",
  "Business Gold Rewards Card",
  "Business Platinum Rewards Card",
  "Business Silver Rewards Card",
  "Crypto-Cash Back",
  "Diamond Elite Card",
  "EcoCard",
  "Gold Rewards Card",
  "Green Rewards Card",
  "Platinum Rewards Card",
  "Silver Rewards Card",
  "Silver Zoom Card"
]

const CREDIT_CARD_REWARDS: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, number]>]> = [
  ["Bronze Rewards Card", [["default", 1.0]]],
  ["Silver Rewards Card", [["Travel", 4.0], ["Software", 4.0], ["default", 1.0]]],
  ["Gold Rewards Card", [["default", 2.5]]],
  ["Platinum Rewards Card", [["default", 10.0]]],
  ["Business Bronze Rewards Card", [["default", 1.0]]],
  ["Business Silver Rewards Card", [["Travel", 10.0], ["Software", 10.0], ["default", 1.0]]],
  ["Green Rewards Card", [["Sustainable", 3.0], ["default", 1.0]]],
  ["Business Gold Rewards Card", [["Operations", 2.5], ["default", 1.0]]],
  ["Business Platinum Rewards Card", [["Travel", 4.0], ["Software", 4.0], ["Media", 4.0], ["default", 1.5]]],
  ["Silver Zoom Card", [["Transportation", 3.0], ["default", 1.0]]],
  ["Diamond Elite Card", [["default", 5.0]]],
  ["EcoCard", [["Green", 5.0], ["default", 1.0]]],
  ["Crypto-Cash Back", [["default", 2.0]]]
]

const pyListRepr = (xs: ReadonlyArray<string>) => `[${xs.map((x) => pyRepr(x)).join(", ")}]`

const userTools: Record<string, Implementation> = {
  apply_for_credit_card: {
    params: [p("card_type"), p("customer_name"), p("annual_income"), p("rho_bank_subscription", false)],
    run: (ctx, a) => {
      if (!inList(a["card_type"], VALID_CREDIT_CARD_TYPES)) {
        return `Error: Invalid card_type '${s(a["card_type"])}'. Must be one of: ${pyListRepr(VALID_CREDIT_CARD_TYPES)}`
      }
      let income: number
      try {
        income = pyFloatOf(a["annual_income"])
      } catch (e) {
        if (e instanceof PyException) return "Error: Invalid annual_income. Must be a number."
        throw e
      }
      const sub = a["rho_bank_subscription"]
      const id = deterministicId(`credit_card:${s(a["card_type"])}:${s(a["customer_name"])}:${pyRepr(pyFloat(income))}:${s(sub)}`)
      const record: Rec = {
        application_id: id,
        card_type: a["card_type"]!,
        customer_name: a["customer_name"]!,
        annual_income: pyFloat(income),
        rho_bank_subscription: sub!,
        status: "PENDING",
        date: TODAY
      }
      if (!ctx.add("credit_card_applications", id, record)) return `Failed to submit application: Record ID '${id}' may already exist.`
      return "Credit card application submitted:\nYour application has been successfully submitted. You will receive a decision within 5-7 business days via email."
    }
  },
  submit_referral: {
    params: [p("user_id"), p("account_type")],
    run: (ctx, a) => {
      const id = deterministicId(pyJoin(":", ["referral", a["user_id"], a["account_type"]]))
      const record: Rec = { referral_id: id, referrer_id: a["user_id"]!, referred_account_type: a["account_type"]!, referral_status: "NO_PROGRESS", date: TODAY }
      if (!ctx.add("referrals", id, record)) return `Failed to submit referral: Record ID '${id}' may already exist.`
      return (
        `Referral request submitted successfully!\n  - Referral ID: ${id}\n  - Referrer ID: ${s(a["user_id"])}\n  - Account Type: ${s(a["account_type"])}\n` +
        `  - Status: NO_PROGRESS\n  - Date: ${TODAY}\n\nShare your referral ID with the person you're referring. They will need to use this when applying for their account.`
      )
    }
  },
  call_discoverable_user_tool: {
    params: [p("discoverable_tool_name"), p("arguments", "{}")],
    run: (ctx, a) => {
      const name = a["discoverable_tool_name"]
      if (!inNames(Object.keys(userDiscoverable), name) || typeof name !== "string") return `Error: Unknown discoverable tool '${s(name)}'.`
      const parsed = loadsArg(a["arguments"], true)
      if (Either.isLeft(parsed)) return `Error: Invalid JSON in arguments: ${parsed.left}`
      const args = parsed.right
      const impl = userDiscoverable[name]!
      const names = impl.params.map((x) => x.name)
      for (const x of impl.params) if (!("defaultValue" in x) && !pyContains(args, x.name)) return `Error: Missing required parameter: ${x.name}`
      const keys = isDict(args) ? orderedEntries(args).map(([k]) => k as Py) : pyIterate(args)
      for (const k of keys) if (!inNames(names, k)) return `Error: Unexpected parameter: ${s(k)}`
      try {
        if (!isDict(args)) raise("TypeError", `${MODULE}.KnowledgeUserTools.${name}() argument after ** must be a mapping, not ${pyTypeName(args)}`)
        return impl.run(ctx, bind(`KnowledgeUserTools.${name}`, impl.params, args as Args))
      } catch (e) {
        if (e instanceof PyException && e.type === "TypeError") return `Error: Invalid arguments for tool '${name}': ${e.text}`
        throw e
      }
    }
  },
  list_discoverable_user_tools: {
    params: [],
    run: (ctx) => `Tools given to you by the agent:\n${queryDatabaseTool(ctx, "user_discoverable_tools", "{}")}`
  },
  request_human_agent_transfer: {
    params: [],
    run: (ctx) => {
      const existing = queryDatabaseTool(ctx, "human_transfer_requests", "{}")
      const count = existing.includes("No records found") || existing.includes("No results found") ? 1 : existing.split("request_id").length - 1 + 1
      const id = `transfer_request_${count}`
      ctx.add("human_transfer_requests", id, { request_id: id, request_number: count, requested_at: TODAY, status: "PENDING" })
      return `Transfer request #${count} submitted.\nThe agent will process your request.`
    }
  },
  submit_transaction: {
    params: [p("user_id"), p("credit_card_type"), p("merchant_name"), p("amount"), p("category")],
    run: (ctx, a) => {
      const card = inNames(CREDIT_CARD_REWARDS.map(([n]) => n), a["credit_card_type"]) ? CREDIT_CARD_REWARDS.find(([n]) => n === a["credit_card_type"]) : undefined
      if (card === undefined) {
        return `Error: Unknown credit card type '${s(a["credit_card_type"])}'. Available types: ${pyListRepr(CREDIT_CARD_REWARDS.map(([n]) => n))}`
      }
      const amount = a["amount"]
      const seed = pyJoin(":", ["transaction", a["user_id"], a["credit_card_type"], a["merchant_name"], f2(amount), a["category"]])
      const id = `txn_${deterministicId(seed, 12)}`
      const rates = card[1]
      const category = asKey(a["category"])
      const rate = (rates.find(([c]) => c === category) ?? rates.find(([c]) => c === "default")!)[1]
      const product = num(amount)! * rate
      const points = Math.trunc(product)
      const record: Rec = {
        transaction_id: id,
        user_id: a["user_id"]!,
        credit_card_type: a["credit_card_type"]!,
        merchant_name: a["merchant_name"]!,
        transaction_amount: `$${f2(amount)}`,
        transaction_date: TODAY,
        category: a["category"]!,
        status: "COMPLETED",
        rewards_earned: `${points} points`
      }
      if (!ctx.add("credit_card_transaction_history", id, record)) return `Failed to submit transaction: Record ID '${id}' may already exist.`
      return (
        `Transaction submitted successfully!\n  - Transaction ID: ${id}\n  - User ID: ${s(a["user_id"])}\n  - Card Type: ${s(a["credit_card_type"])}\n` +
        `  - Merchant: ${s(a["merchant_name"])}\n  - Amount: $${f2(amount)}\n  - Category: ${s(a["category"])}\n  - Date: ${TODAY}\n` +
        `  - Rewards Earned: ${points} points (${pyRepr(pyFloat(rate))}% cashback rate)\n`
      )
    }
  }
}

// -- user discoverable tools --------------------------------------------------------------------------

const checkToolGiven = (ctx: Ctx, name: string): string | undefined => {
  const r = queryDatabaseTool(ctx, "user_discoverable_tools", fieldQuery("tool_name", name))
  return r.includes("No records found")
    ? `Error: Tool '${name}' has not been given to you by the agent. The agent must first use \`give_discoverable_user_tool\` to give this tool to you.`
    : undefined
}

const logUserToolCall = (ctx: Ctx, name: string, args: Rec): void => {
  const id = deterministicId(`user_discoverable_tool_call:${name}:${dumpsSorted(args)}`)
  ctx.add("user_discoverable_tool_calls", id, { tool_name: name, arguments: args, called_at: TODAY, status: "CALLED" })
}

/**
 * A user discoverable tool: refused unless the agent has given it (`give_discoverable_user_tool`);
 * its call is logged with its arguments, in signature order, before it runs.
 */
const givenUserTool = (
  name: string,
  params: ReadonlyArray<string>,
  run: (ctx: Ctx, a: Args, args: Rec, name: string) => string
): Implementation => ({
  params: params.map((n) => p(n)),
  run: (ctx, a) => {
    const err = checkToolGiven(ctx, name)
    if (err !== undefined) return err
    const args: Rec = Object.fromEntries(params.map((k) => [k, a[k]!]))
    logUserToolCall(ctx, name, args)
    return run(ctx, a, args, name)
  }
})

const userDiscoverable: Record<string, Implementation> = {
  submit_cash_back_dispute_0589: givenUserTool("submit_cash_back_dispute_0589", ["user_id", "transaction_id"], (ctx, a, args, name) => {
    const id = `dsp_${deterministicId(`dispute:${s(a["user_id"])}:${s(a["transaction_id"])}`, 12)}`
    let autoResolve: Py = false
    if (ctx.size("task_config") > 0) {
      const config = ctx.get("task_config", "dispute_settings") ?? {}
      autoResolve = Object.hasOwn(config, "auto_resolve_disputes") ? config["auto_resolve_disputes"]! : false
    }
    const base: Rec = { dispute_id: id, user_id: a["user_id"]!, transaction_id: a["transaction_id"]!, submitted_at: TODAY }
    const [record, status]: [Rec, string] = truthy(autoResolve)
      ? [{ ...base, status: "RESOLVED", resolution: "APPROVED" }, "Status: RESOLVED - The dispute has been reviewed and approved. The transaction rewards need to be updated."]
      : [{ ...base, status: "SUBMITTED" }, "Status: SUBMITTED - Your dispute has been queued for review."]
    const ok = ctx.add("cash_back_disputes", id, record)
    let out = `Cash back dispute submitted successfully. Your case has been queued for review.\n\nExecuted: ${name}\nArguments: ${dumpsIndent2(args)}\n`
    out += ok ? `Dispute ID: ${id}\n${status}` : "Note: Dispute may have already been submitted for this transaction."
    return out
  }),
  get_referral_link: givenUserTool("get_referral_link", ["user_id", "card_name"], (ctx, a, args, name) => {
    const id = deterministicId(`referral_link:${s(a["user_id"])}:${s(a["card_name"])}`)
    const ok = ctx.add("referrals", id, { referral_id: id, referrer_id: a["user_id"]!, referred_account_type: a["card_name"]!, referral_status: "NO_PROGRESS", date: TODAY })
    let out = `Referral link generated successfully. Share this link with the person you want to refer.\n\nExecuted: ${name}\nArguments: ${dumpsIndent2(args)}\n`
    out += ok ? `Referral ID: ${id}\nReferral link: https://rhobank.com/refer/${id}` : "Note: A referral link for this card may have already been generated."
    return out
  }),
  get_card_last_4_digits: givenUserTool("get_card_last_4_digits", ["credit_card_account_id"], (ctx, a, args, name) => {
    const r = queryDatabaseTool(ctx, "credit_card_accounts", fieldQuery("account_id", a["credit_card_account_id"]))
    if (r.includes("No results found") || r.includes("No records found")) return `Error: Credit card account '${s(a["credit_card_account_id"])}' not found.`
    let last4 = ""
    for (const ch of sha256hex(`card_last4:${s(a["credit_card_account_id"])}`)) {
      if (ch >= "0" && ch <= "9") {
        last4 += ch
        if (last4.length === 4) break
      }
    }
    last4 = last4.padEnd(4, "0")
    return `Card information retrieved successfully.\n\nExecuted: ${name}\nArguments: ${dumpsIndent2(args)}\nLast 4 digits of card: ${last4}`
  }),
  deposit_check_3847: givenUserTool("deposit_check_3847", ["account_id", "check_amount"], (ctx, a, args, name) => {
    let amount: number
    try {
      amount = pyFloatOf(a["check_amount"])
    } catch (e) {
      if (e instanceof PyException && (e.type === "ValueError" || e.type === "TypeError")) return `Error: Invalid check amount '${s(a["check_amount"])}'. Must be a number.`
      throw e
    }
    if (amount <= 0) return "Error: Check amount must be positive."
    const id = asKey(a["account_id"])
    const account = id === undefined ? undefined : ctx.get("accounts", id)
    if (account === undefined || id === undefined) return `Error: Account '${s(a["account_id"])}' not found.`
    if (!inList(account["status"], ["ACTIVE", "OPEN"])) return `Error: Account '${id}' is not active.`
    const current = accountBalance(account)
    const next = current + amount
    ctx.update("accounts", id, { current_holdings: `$${formatFixed(next, 2)}` })
    return (
      `Check deposited successfully. Funds will be available according to your account's deposit policy.\n\nExecuted: ${name}\n` +
      `Arguments: ${dumpsIndent2(args)}\nCheck deposit processed!\n  - Account: ${id}\n  - Check Amount: $${formatFixed(amount, 2)}\n` +
      `  - Previous Balance: $${formatFixed(current, 2)}\n  - New Balance: $${formatFixed(next, 2)}`
    )
  })
}

// -- agent discoverable tools (see discoverable.ts) --------------------------------------------------

import { agentDiscoverableTools } from "./discoverable.ts"

const agentDiscoverable: Record<string, DiscoverableImpl> = agentDiscoverableTools
const agentDiscoverableNames = Object.keys(agentDiscoverable)

// -- dispatch --------------------------------------------------------------------------------------

const agentSide: ReadonlyMap<string, Implementation> = new Map([...Object.entries(agentTools), ...Object.entries(agentDiscoverable)])
const userSide: ReadonlyMap<string, Implementation> = new Map([...Object.entries(userTools), ...Object.entries(userDiscoverable)])

/**
 * `Environment.get_response(ToolCall(name, arguments, requestor))`: the agent's side finds the
 * agent tools and the agent discoverable tools (directly callable, no unlock check and no
 * logging); the user's side the user tools and the user discoverable tools.
 */
export const step = (world: World.World, env: Environment, requestor: Requestor, name: string, args: Args): readonly [World.World, Tool.ToolOutcome] => {
  const ctx = new Ctx(world, env)
  const table = requestor === "user" ? userSide : agentSide
  const impl = table.get(name)
  // TypeError texts name the method's __qualname__ (KB_search comes from the mixin).
  const cls = requestor === "user" ? "KnowledgeUserTools" : name === "KB_search" ? "KBSearchMixin" : "KnowledgeTools"
  if (impl === undefined) return [world, { output: `Error: Tool '${name}' not found.`, error: true, writes: [] }]
  try {
    const output = impl.run(ctx, bind(`${cls}.${name}`, impl.params, args))
    const writes = ctx.writes
    return [World.apply(world, writes), { output, error: false, writes }]
  } catch (e) {
    if (e instanceof PyException) {
      // Upstream mutated in place before raising: keep the writes made so far.
      const writes = ctx.writes
      return [World.apply(world, writes), { output: `Error: ${e.text}`, error: true, writes }]
    }
    throw e
  }
}

export { title as pyTitle }

// -- as world tools --------------------------------------------------------------------------------

export interface BankingTools {
  /** The 15 agent tools the agent is offered (tools.json order). */
  readonly agent: ReadonlyArray<Tool.Tool>
  /** The agent discoverable tools: never offered, but a call by name runs (no unlock check, no log). */
  readonly agentHidden: ReadonlyArray<Tool.Tool>
  /** The 6 user tools (offer a task the subset its `user_tools` names). */
  readonly user: ReadonlyArray<Tool.Tool>
  /** The user discoverable tools: callable by name, they check themselves that they were given. */
  readonly userHidden: ReadonlyArray<Tool.Tool>
}

const asTool = (env: Environment, requestor: Requestor, spec: Tool.ToolSpec, access: Tool.Tool["access"]): Tool.Tool => ({
  spec,
  access,
  run: (world, args) => step(world, env, requestor, spec.name, args)[1]
})

const discoverableSpec = (d: DiscoverableTool): Tool.ToolSpec => ({
  name: d.name,
  description: d.tool_info.description,
  parameters: {
    type: "object",
    properties: Object.fromEntries(Object.entries(d.tool_info.parameters).map(([k, v]) => [k, { type: v.type, description: v.description }])),
    required: Object.entries(d.tool_info.parameters).filter(([, v]) => v.required).map(([k]) => k)
  }
})

/** Every banking tool as a world `Tool` (pure: world and arguments in, outcome and writes out). */
export const bankingTools = (env: Environment, data: BankingData): BankingTools => {
  const access = (types: BankingData["toolTypes"], name: string): Tool.Tool["access"] => (types.find((t) => t.name === name)?.type === "read" ? "read" : "write")
  const hidden = (owner: "assistant" | "user") =>
    env.discoverable.filter((d) => d.owner === owner).map((d) => asTool(env, owner, discoverableSpec(d), d.type === "read" ? "read" : "write"))
  return {
    agent: data.toolSpecs.map((s) => asTool(env, "assistant", s, access(data.toolTypes, s.name))),
    agentHidden: hidden("assistant"),
    user: data.userToolSpecs.map((s) => asTool(env, "user", s, access(data.userToolTypes, s.name))),
    userHidden: hidden("user")
  }
}
