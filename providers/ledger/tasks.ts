/**
 * The ledger's initial world and its tasks, written here. Each task has an instruction, the
 * gold actions that fulfil it and, for questions, the text the answer must contain. Gold
 * actions stay in this module (private to the provider's capabilities).
 */
import type { Canonical } from "../../src/index.ts"

export const initialTables: Record<string, Record<string, Canonical.Json>> = {
  accounts: {
    "ACC-1001": { id: "ACC-1001", owner: "Ada Lovelace", currency: "USD", balance: 250000, frozen: false },
    "ACC-1002": { id: "ACC-1002", owner: "Ada Lovelace", currency: "USD", balance: 1200000, frozen: false },
    "ACC-1003": { id: "ACC-1003", owner: "Alan Turing", currency: "USD", balance: 87500, frozen: false },
    "ACC-1004": { id: "ACC-1004", owner: "Grace Hopper", currency: "USD", balance: 430000, frozen: false },
    "ACC-1005": { id: "ACC-1005", owner: "Grace Hopper", currency: "EUR", balance: 99000, frozen: false },
    "ACC-1006": { id: "ACC-1006", owner: "Edsger Dijkstra", currency: "USD", balance: 15000, frozen: true },
    "ACC-1007": { id: "ACC-1007", owner: "Barbara Liskov", currency: "USD", balance: 5000, frozen: false },
    "ACC-1008": { id: "ACC-1008", owner: "Donald Knuth", currency: "EUR", balance: 314159, frozen: false }
  },
  holds: {
    "H-1": { id: "H-1", account: "ACC-1003", amount: 20000, reason: "card authorization", active: true }
  },
  transfers: {}
}

export interface GoldAction {
  readonly name: string
  readonly arguments: { readonly [key: string]: Canonical.Json }
}

export interface LedgerTask {
  readonly id: string
  readonly stratum: "payments" | "holds" | "questions" | "admin"
  readonly instruction: string
  readonly gold: ReadonlyArray<GoldAction>
  /** For questions: text the final answer must contain. */
  readonly answer?: string
}

const t = (name: string, args: { readonly [key: string]: Canonical.Json }): GoldAction => ({ name, arguments: args })

export const tasks: ReadonlyArray<LedgerTask> = [
  {
    id: "ledger-01",
    stratum: "payments",
    instruction: "Move 500.00 USD from ACC-1001 to ACC-1002 with the memo \"savings\".",
    gold: [t("transfer", { from_account: "ACC-1001", to_account: "ACC-1002", amount: 50000, memo: "savings" })]
  },
  {
    id: "ledger-02",
    stratum: "payments",
    instruction: "Deposit 125.50 USD into Alan Turing's account.",
    gold: [t("find_accounts", { owner: "Alan Turing" }), t("deposit", { account_id: "ACC-1003", amount: 12550 })]
  },
  {
    id: "ledger-03",
    stratum: "payments",
    instruction: "Grace Hopper pays Barbara Liskov 42.00 USD from her USD account, memo \"lunch\".",
    gold: [
      t("find_accounts", { owner: "Grace Hopper" }),
      t("transfer", { from_account: "ACC-1004", to_account: "ACC-1007", amount: 4200, memo: "lunch" })
    ]
  },
  {
    id: "ledger-04",
    stratum: "holds",
    instruction: "Release the card authorization hold on Alan Turing's account.",
    gold: [t("list_holds", { account_id: "ACC-1003" }), t("release_hold", { hold_id: "H-1" })]
  },
  {
    id: "ledger-05",
    stratum: "holds",
    instruction: "Place a hold of 100.00 USD on ACC-1004 with the reason \"rent deposit\".",
    gold: [t("place_hold", { account_id: "ACC-1004", amount: 10000, reason: "rent deposit" })]
  },
  {
    id: "ledger-06",
    stratum: "questions",
    instruction: "What is the available balance of ACC-1003, in cents? Answer with the number.",
    gold: [t("get_account", { account_id: "ACC-1003" })],
    answer: "67500"
  },
  {
    id: "ledger-07",
    stratum: "questions",
    instruction: "Which currency is Donald Knuth's account in? Answer with the three-letter code.",
    gold: [t("find_accounts", { owner: "Donald Knuth" }), t("get_account", { account_id: "ACC-1008" })],
    answer: "EUR"
  },
  {
    id: "ledger-08",
    stratum: "admin",
    instruction: "Unfreeze Edsger Dijkstra's account, then deposit 10.00 USD into it.",
    gold: [
      t("find_accounts", { owner: "Edsger Dijkstra" }),
      t("set_frozen", { account_id: "ACC-1006", frozen: false }),
      t("deposit", { account_id: "ACC-1006", amount: 1000 })
    ]
  },
  {
    id: "ledger-09",
    stratum: "admin",
    instruction: "Freeze ACC-1007.",
    gold: [t("set_frozen", { account_id: "ACC-1007", frozen: true })]
  },
  {
    id: "ledger-10",
    stratum: "payments",
    instruction: "Transfer 20.00 EUR from Grace Hopper's EUR account to Donald Knuth, memo \"book\".",
    gold: [
      t("find_accounts", { owner: "Grace Hopper" }),
      t("find_accounts", { owner: "Donald Knuth" }),
      t("transfer", { from_account: "ACC-1005", to_account: "ACC-1008", amount: 2000, memo: "book" })
    ]
  },
  {
    id: "ledger-11",
    stratum: "holds",
    instruction: "Put a hold of 50.00 USD on ACC-1007 for \"overdraft review\", then move 10.00 USD from ACC-1007 to ACC-1001 with memo \"refund\".",
    gold: [
      t("place_hold", { account_id: "ACC-1007", amount: 5000, reason: "overdraft review" }),
      t("transfer", { from_account: "ACC-1007", to_account: "ACC-1001", amount: 1000, memo: "refund" })
    ]
  },
  {
    id: "ledger-12",
    stratum: "questions",
    instruction: "How many accounts does Ada Lovelace hold? Answer with the number.",
    gold: [t("find_accounts", { owner: "Ada Lovelace" })],
    answer: "2"
  },
  {
    id: "ledger-13",
    stratum: "payments",
    instruction: "Move 1000.00 USD from Ada Lovelace's savings account (ACC-1002) to her other account, memo \"bills\", then deposit 5.00 USD into ACC-1002.",
    gold: [
      t("transfer", { from_account: "ACC-1002", to_account: "ACC-1001", amount: 100000, memo: "bills" }),
      t("deposit", { account_id: "ACC-1002", amount: 500 })
    ]
  },
  {
    id: "ledger-14",
    stratum: "holds",
    instruction: "Alan Turing wants to send 700.00 USD to Grace Hopper's USD account (memo \"gift\"); release his card authorization hold first so the money is available.",
    gold: [
      t("release_hold", { hold_id: "H-1" }),
      t("transfer", { from_account: "ACC-1003", to_account: "ACC-1004", amount: 70000, memo: "gift" })
    ]
  },
  {
    id: "ledger-15",
    stratum: "admin",
    instruction: "Freeze both of Grace Hopper's accounts.",
    gold: [
      t("find_accounts", { owner: "Grace Hopper" }),
      t("set_frozen", { account_id: "ACC-1004", frozen: true }),
      t("set_frozen", { account_id: "ACC-1005", frozen: true })
    ]
  },
  {
    id: "ledger-16",
    stratum: "questions",
    instruction: "What is the balance of ACC-1008 in cents? Answer with the number.",
    gold: [t("get_account", { account_id: "ACC-1008" })],
    answer: "314159"
  },
  {
    id: "ledger-17",
    stratum: "payments",
    instruction: "Barbara Liskov pays Alan Turing 12.34 USD, memo \"coffee\", and Alan pays her back 2.34 USD, memo \"change\".",
    gold: [
      t("transfer", { from_account: "ACC-1007", to_account: "ACC-1003", amount: 1234, memo: "coffee" }),
      t("transfer", { from_account: "ACC-1003", to_account: "ACC-1007", amount: 234, memo: "change" })
    ]
  },
  {
    id: "ledger-18",
    stratum: "holds",
    instruction: "Place two holds on ACC-1002: 300.00 USD for \"escrow\" and 200.00 USD for \"tax reserve\".",
    gold: [
      t("place_hold", { account_id: "ACC-1002", amount: 30000, reason: "escrow" }),
      t("place_hold", { account_id: "ACC-1002", amount: 20000, reason: "tax reserve" })
    ]
  },
  {
    id: "ledger-19",
    stratum: "questions",
    instruction: "Who owns ACC-1006? Answer with the owner's full name.",
    gold: [t("get_account", { account_id: "ACC-1006" })],
    answer: "Edsger Dijkstra"
  },
  {
    id: "ledger-20",
    stratum: "admin",
    instruction: "Deposit 1.00 USD into every USD account Ada Lovelace holds.",
    gold: [
      t("find_accounts", { owner: "Ada Lovelace" }),
      t("deposit", { account_id: "ACC-1001", amount: 100 }),
      t("deposit", { account_id: "ACC-1002", amount: 100 })
    ]
  }
]
