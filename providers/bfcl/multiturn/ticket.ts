/** TicketAPI: a queue of support tickets and the logged-in user. */
import { type Api, command, dict, getOr, query } from "./api.ts"
import { asStr, noAttribute, type Py, pyAdd, pyCompare, PyDict, pyEq, PyError, pyIter, PySet, pyStr, truthy, typeName } from "./py.ts"

export interface TicketState {
  readonly ticket_queue: Py
  readonly ticket_counter: Py
  readonly current_user: Py
}

const item = (v: Py, k: Py): Py => {
  if (v instanceof PyDict) return v.item(k)
  if (typeof v === "string") throw new PyError("TypeError", `string indices must be integers, not '${typeName(k)}'`)
  if (Array.isArray(v)) throw new PyError("TypeError", `list indices must be integers or slices, not ${typeName(k)}`)
  throw new PyError("TypeError", `'${typeName(v)}' object is not subscriptable`)
}

/** `_find_ticket`: the first ticket with that id, and where it is. */
const find = (s: TicketState, ticketId: Py): { readonly ticket: Py; readonly at: number } => {
  const queue = pyIter(s.ticket_queue)
  for (let i = 0; i < queue.length; i++) if (pyEq(item(queue[i] as Py, "id"), ticketId)) return { ticket: queue[i] as Py, at: i }
  return { ticket: null, at: -1 }
}

const replaceAt = (s: TicketState, at: number, ticket: Py): TicketState => {
  const queue = pyIter(s.ticket_queue)
  return { ...s, ticket_queue: [...queue.slice(0, at), ticket, ...queue.slice(at + 1)] }
}

const asDict = (v: Py, attr: string): PyDict => {
  if (v instanceof PyDict) return v
  throw noAttribute(v, attr)
}

const notFound = (id: Py) => dict({ error: `Ticket with ID ${pyStr(id)} not found.` })

const validFields = PySet.of(["title", "description", "status", "priority"])

export const TicketAPI: Api<TicketState> = {
  name: "TicketAPI",
  load: (config) => ({
    ticket_queue: getOr(config, "ticket_queue", []),
    ticket_counter: getOr(config, "ticket_counter", 1),
    current_user: getOr(config, "current_user", null)
  }),
  publicState: (s) => [
    ["ticket_queue", s.ticket_queue],
    ["ticket_counter", s.ticket_counter],
    ["current_user", s.current_user]
  ],
  methods: {
    create_ticket: command(["title", ["description", ""], ["priority", 1]], (s, title, description, priority) => {
      if (!truthy(s.current_user)) return [dict({ error: "User not authenticated. Please log in to create a ticket." }), s]
      if (pyCompare("<", priority as Py, 1) || pyCompare(">", priority as Py, 5)) {
        return [dict({ error: "Invalid priority. Priority must be between 1 and 5." }), s]
      }
      const ticket = dict({ id: s.ticket_counter, title, description: description as Py, status: "Open", priority: priority as Py, created_by: s.current_user })
      if (!Array.isArray(s.ticket_queue)) throw noAttribute(s.ticket_queue, "append")
      return [ticket, { ...s, ticket_queue: [...s.ticket_queue, ticket], ticket_counter: pyAdd(s.ticket_counter, 1) }]
    }),
    get_ticket: query(["ticket_id"], (s, ticketId) => {
      const { ticket } = find(s, ticketId)
      return truthy(ticket) ? ticket : notFound(ticketId)
    }),
    close_ticket: command(["ticket_id"], (s, ticketId) => {
      const { ticket, at } = find(s, ticketId)
      if (!truthy(ticket)) return [notFound(ticketId), s]
      if (pyEq(item(ticket, "status"), "Closed")) return [dict({ error: `Ticket with ID ${pyStr(ticketId)} is already closed.` }), s]
      return [dict({ status: `Ticket ${pyStr(ticketId)} has been closed successfully.` }), replaceAt(s, at, asDict(ticket, "__setitem__").set("status", "Closed"))]
    }),
    resolve_ticket: command(["ticket_id", "resolution"], (s, ticketId, resolution) => {
      const { ticket, at } = find(s, ticketId)
      if (!truthy(ticket)) return [notFound(ticketId), s]
      if (pyEq(item(ticket, "status"), "Resolved")) return [dict({ error: `Ticket with ID ${pyStr(ticketId)} is already resolved.` }), s]
      const updated = asDict(ticket, "__setitem__").set("status", "Resolved").set("resolution", resolution as Py)
      return [dict({ status: `Ticket ${pyStr(ticketId)} has been resolved successfully.` }), replaceAt(s, at, updated)]
    }),
    edit_ticket: command(["ticket_id", "updates"], (s, ticketId, updates) => {
      const { ticket, at } = find(s, ticketId)
      if (!truthy(ticket)) return [notFound(ticketId), s]
      const u = asDict(updates as Py, "keys")
      const invalid = u.keys().filter((k) => !validFields.has(k))
      if (invalid.length > 0) {
        const bad = invalid.find((k) => typeof k !== "string")
        if (bad !== undefined) throw new PyError("TypeError", `sequence item 0: expected str instance, ${typeName(bad)} found`)
        return [dict({ error: `Invalid fields for update: ${invalid.map(pyStr).join(", ")}` }), s]
      }
      let t = asDict(ticket, "__setitem__")
      for (const [k, v] of u.entries()) if (v !== null) t = t.set(k, v)
      return [dict({ status: `Ticket ${pyStr(ticketId)} has been updated successfully.` }), replaceAt(s, at, t)]
    }),
    ticket_login: command(["username", "password"], (s, username, password) => {
      if (truthy(username as Py) && truthy(password as Py)) return [dict({ success: true }), { ...s, current_user: username as Py }]
      return [dict({ success: false }), s]
    }),
    ticket_get_login_status: query([], (s) => dict({ login_status: truthy(s.current_user) })),
    logout: command([], (s) => {
      if (truthy(s.current_user)) return [dict({ success: true }), { ...s, current_user: null }]
      return [dict({ success: false }), s]
    }),
    get_user_tickets: query([["status", null]], (s, status) => {
      if (!truthy(s.current_user)) return [dict({ error: "User not authenticated. Please log in to view tickets." })]
      let mine = pyIter(s.ticket_queue).filter((t) => pyEq(item(t, "created_by"), s.current_user))
      if (truthy(status as Py)) {
        mine = mine.filter((t) => asStr(item(t, "status"), "lower").toLowerCase() === asStr(status as Py, "lower").toLowerCase())
      }
      return mine
    })
  }
}
