/**
 * The ledger's tools: accounts, balances (integer cents), transfers and holds. Each is a pure
 * function of the world; writes are returned, never made.
 */
import { type Canonical, Tool, World } from "../../src/index.ts"

export interface Account {
  readonly id: string
  readonly owner: string
  readonly currency: string
  readonly balance: number
  readonly frozen: boolean
}

export interface Hold {
  readonly id: string
  readonly account: string
  readonly amount: number
  readonly reason: string
  readonly active: boolean
}

const account = (world: World.World, id: string): Account | undefined => World.get(world, "accounts", id) as Account | undefined

const activeHolds = (world: World.World, accountId: string): number =>
  World.entries(world, "holds").reduce((sum, [, h]) => {
    const hold = h as unknown as Hold
    return hold.account === accountId && hold.active ? sum + hold.amount : sum
  }, 0)

const available = (world: World.World, a: Account): number => a.balance - activeHolds(world, a.id)

const str = (args: { readonly [k: string]: Canonical.Json }, name: string): string | undefined => {
  const v = args[name]
  return typeof v === "string" ? v : undefined
}

const cents = (args: { readonly [k: string]: Canonical.Json }, name: string): number | undefined => {
  const v = args[name]
  return typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined
}

const nextId = (world: World.World, table: string, prefix: string): string => `${prefix}-${World.size(world, table) + 1}`

const view = (world: World.World, a: Account) => JSON.stringify({ ...a, available: available(world, a) })

const objectSchema = (properties: Record<string, Canonical.Json>, required: ReadonlyArray<string>) => ({
  type: "object",
  properties,
  required: [...required]
})

const idParam = { type: "string", description: "The account id, e.g. ACC-1001." }
const amountParam = { type: "integer", description: "Amount in cents, a positive integer." }

export const tools: ReadonlyArray<Tool.Tool> = [
  {
    spec: {
      name: "get_account",
      description: "Get an account: owner, currency, balance and available balance (balance less active holds), in cents.",
      parameters: objectSchema({ account_id: idParam }, ["account_id"])
    },
    access: "read",
    run: (world, args) => {
      const a = account(world, str(args, "account_id") ?? "")
      return a ? Tool.ok(view(world, a)) : Tool.fail("Error: account not found")
    }
  },
  {
    spec: {
      name: "find_accounts",
      description: "List the ids of the accounts an owner holds, by the owner's full name.",
      parameters: objectSchema({ owner: { type: "string", description: "Full name, e.g. Ada Lovelace." } }, ["owner"])
    },
    access: "read",
    run: (world, args) => {
      const owner = (str(args, "owner") ?? "").toLowerCase()
      const ids = World.entries(world, "accounts")
        .filter(([, a]) => (a as unknown as Account).owner.toLowerCase() === owner)
        .map(([id]) => id)
      return ids.length > 0 ? Tool.ok(JSON.stringify(ids)) : Tool.fail("Error: no account for this owner")
    }
  },
  {
    spec: {
      name: "list_holds",
      description: "List the active holds on an account.",
      parameters: objectSchema({ account_id: idParam }, ["account_id"])
    },
    access: "read",
    run: (world, args) => {
      const id = str(args, "account_id") ?? ""
      if (!account(world, id)) return Tool.fail("Error: account not found")
      const holds = World.entries(world, "holds")
        .map(([, h]) => h as unknown as Hold)
        .filter((h) => h.account === id && h.active)
      return Tool.ok(JSON.stringify(holds))
    }
  },
  {
    spec: {
      name: "deposit",
      description: "Deposit money into an account.",
      parameters: objectSchema({ account_id: idParam, amount: amountParam }, ["account_id", "amount"])
    },
    access: "write",
    run: (world, args) => {
      const a = account(world, str(args, "account_id") ?? "")
      const amount = cents(args, "amount")
      if (!a) return Tool.fail("Error: account not found")
      if (amount === undefined) return Tool.fail("Error: amount must be a positive integer number of cents")
      if (a.frozen) return Tool.fail("Error: account is frozen")
      const next = { ...a, balance: a.balance + amount }
      return Tool.ok(view(world, next), [{ table: "accounts", key: a.id, value: next as unknown as Canonical.Json }])
    }
  },
  {
    spec: {
      name: "transfer",
      description: "Move money between two accounts of the same currency. Fails if the source's available balance is too low or either account is frozen.",
      parameters: objectSchema(
        {
          from_account: idParam,
          to_account: idParam,
          amount: amountParam,
          memo: { type: "string", description: "A short note kept with the transfer." }
        },
        ["from_account", "to_account", "amount", "memo"]
      )
    },
    access: "write",
    run: (world, args) => {
      const from = account(world, str(args, "from_account") ?? "")
      const to = account(world, str(args, "to_account") ?? "")
      const amount = cents(args, "amount")
      if (!from || !to) return Tool.fail("Error: account not found")
      if (from.id === to.id) return Tool.fail("Error: cannot transfer to the same account")
      if (amount === undefined) return Tool.fail("Error: amount must be a positive integer number of cents")
      if (from.frozen || to.frozen) return Tool.fail("Error: account is frozen")
      if (from.currency !== to.currency) return Tool.fail("Error: currencies differ")
      if (available(world, from) < amount) return Tool.fail("Error: insufficient available balance")
      const id = nextId(world, "transfers", "T")
      const transfer = { id, from: from.id, to: to.id, amount, memo: str(args, "memo") ?? "" }
      return Tool.ok(JSON.stringify(transfer), [
        { table: "accounts", key: from.id, value: { ...from, balance: from.balance - amount } as unknown as Canonical.Json },
        { table: "accounts", key: to.id, value: { ...to, balance: to.balance + amount } as unknown as Canonical.Json },
        { table: "transfers", key: id, value: transfer }
      ])
    }
  },
  {
    spec: {
      name: "place_hold",
      description: "Place a hold on part of an account's available balance.",
      parameters: objectSchema(
        { account_id: idParam, amount: amountParam, reason: { type: "string", description: "Why the hold is placed." } },
        ["account_id", "amount", "reason"]
      )
    },
    access: "write",
    run: (world, args) => {
      const a = account(world, str(args, "account_id") ?? "")
      const amount = cents(args, "amount")
      if (!a) return Tool.fail("Error: account not found")
      if (amount === undefined) return Tool.fail("Error: amount must be a positive integer number of cents")
      if (available(world, a) < amount) return Tool.fail("Error: insufficient available balance")
      const id = nextId(world, "holds", "H")
      const hold: Hold = { id, account: a.id, amount, reason: str(args, "reason") ?? "", active: true }
      return Tool.ok(JSON.stringify(hold), [{ table: "holds", key: id, value: hold as unknown as Canonical.Json }])
    }
  },
  {
    spec: {
      name: "release_hold",
      description: "Release an active hold by its id.",
      parameters: objectSchema({ hold_id: { type: "string", description: "The hold id, e.g. H-1." } }, ["hold_id"])
    },
    access: "write",
    run: (world, args) => {
      const id = str(args, "hold_id") ?? ""
      const hold = World.get(world, "holds", id) as Hold | undefined
      if (!hold) return Tool.fail("Error: hold not found")
      if (!hold.active) return Tool.fail("Error: hold already released")
      const next = { ...hold, active: false }
      return Tool.ok(JSON.stringify(next), [{ table: "holds", key: id, value: next as unknown as Canonical.Json }])
    }
  },
  {
    spec: {
      name: "set_frozen",
      description: "Freeze or unfreeze an account. A frozen account takes no deposit and no transfer.",
      parameters: objectSchema({ account_id: idParam, frozen: { type: "boolean" } }, ["account_id", "frozen"])
    },
    access: "write",
    run: (world, args) => {
      const a = account(world, str(args, "account_id") ?? "")
      if (!a) return Tool.fail("Error: account not found")
      const frozen = args["frozen"] === true
      const next = { ...a, frozen }
      return Tool.ok(view(world, next), [{ table: "accounts", key: a.id, value: next as unknown as Canonical.Json }])
    }
  }
]
