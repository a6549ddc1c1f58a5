/**
 * MessageAPI: a workspace's users and an inbox of `{receiver_id: message}` entries. Message ids
 * come from the instance's own `random.Random`, retried until unseen.
 */
import { type Api, command, dict, getOr, query } from "./api.ts"
import { asStr, noAttribute, type Py, pyAdd, PyDict, PyError, pyEq, pyIn, pyIter, PySet, pyStr, truthy } from "./py.ts"
import { PyRandom } from "./random.ts"

export interface MessageState {
  readonly generated_ids: Py
  readonly user_count: Py
  readonly user_map: Py
  readonly inbox: Py
  readonly message_count: Py
  readonly current_user: Py
  readonly random: PyRandom
}

const defaults = (): Record<string, Py> => ({
  generated_ids: PySet.of([]),
  user_count: 4,
  user_map: PyDict.fromRecord({ Alice: "USR001", Bob: "USR002", Catherine: "USR003", Daniel: "USR004" }),
  inbox: [
    PyDict.fromRecord({ USR002: "My name is Alice. I want to connect." }),
    PyDict.fromRecord({ USR003: "Could you upload the file?" }),
    PyDict.fromRecord({ USR004: "Could you upload the file?" })
  ],
  message_count: 3,
  current_user: null
})

const asDict = (v: Py, attr: string): PyDict => {
  if (v instanceof PyDict) return v
  throw noAttribute(v, attr)
}
const asList = (v: Py, attr: string): ReadonlyArray<Py> => {
  if (Array.isArray(v)) return v
  throw noAttribute(v, attr)
}

/** `list(message.items())[0]` of an inbox entry. */
const firstItem = (message: Py): readonly [Py, Py] => {
  const e = asDict(message, "items").entries()[0]
  if (e === undefined) throw new PyError("IndexError", "list index out of range")
  return e
}

const loggedOut = dict({ error: "No user is currently logged in." })

export const MessageAPI: Api<MessageState> = {
  name: "MessageAPI",
  load: (config) => {
    const d = defaults()
    const seed = getOr(config, "random_seed", 200191)
    return {
      generated_ids: getOr(config, "generated_ids", d["generated_ids"] as Py),
      user_count: getOr(config, "user_count", d["user_count"] as Py),
      user_map: getOr(config, "user_map", d["user_map"] as Py),
      inbox: getOr(config, "inbox", d["inbox"] as Py),
      message_count: getOr(config, "message_count", d["message_count"] as Py),
      current_user: getOr(config, "current_user", d["current_user"] as Py),
      random: PyRandom.seeded(typeof seed === "number" ? seed : 200191)
    }
  },
  publicState: (s) => [
    ["generated_ids", s.generated_ids],
    ["user_count", s.user_count],
    ["user_map", s.user_map],
    ["inbox", s.inbox],
    ["message_count", s.message_count],
    ["current_user", s.current_user]
  ],
  methods: {
    list_users: query([], (s) => dict({ user_list: asDict(s.user_map, "keys").keys() })),
    get_user_id: query(["user"], (s, user) => {
      if (!pyIn(user, s.user_map)) return dict({ error: `User '${pyStr(user)}' not found in the workspace.` })
      return dict({ user_id: asDict(s.user_map, "get").get(user) ?? null })
    }),
    message_login: command(["user_id"], (s, userId) => {
      if (!pyIn(userId, asDict(s.user_map, "values").values())) {
        return [dict({ login_status: false, message: `User ID '${pyStr(userId)}' not found.` }), s]
      }
      return [dict({ login_status: true, message: `User '${pyStr(userId)}' logged in successfully.` }), { ...s, current_user: userId }]
    }),
    message_get_login_status: query([], (s) => dict({ login_status: truthy(s.current_user) })),
    send_message: command(["receiver_id", "message"], (s, receiverId, message) => {
      if (!truthy(s.current_user)) return [loggedOut, s]
      if (!pyIn(receiverId, asDict(s.user_map, "values").values())) return [dict({ error: `Receiver ID '${pyStr(receiverId)}' not found.` }), s]
      const draws = s.random.draws()
      let id = draws.randint(10000, 99999)
      while (pyIn(id, s.generated_ids)) id = draws.randint(10000, 99999)
      if (!(s.generated_ids instanceof PySet)) throw noAttribute(s.generated_ids, "add")
      const inbox = [...asList(s.inbox, "append"), PyDict.of([[receiverId, message]])]
      return [
        dict({ sent_status: true, message_id: dict({ new_id: id }), message: `Message sent to '${pyStr(receiverId)}' successfully.` }),
        { ...s, generated_ids: s.generated_ids.add(id), inbox, message_count: pyAdd(s.message_count, 1), random: draws.done() }
      ]
    }),
    delete_message: command(["receiver_id"], (s, receiverId) => {
      if (!truthy(s.current_user)) return [loggedOut, s]
      const inbox = pyIter(s.inbox)
      for (let i = inbox.length - 1; i >= 0; i--) {
        const message = inbox[i] as Py
        const [receiver] = firstItem(message)
        if (pyEq(receiver, receiverId)) {
          // list.remove drops the first entry equal to this one, which may be an earlier one
          const at = inbox.findIndex((m) => pyEq(m, message))
          return [
            dict({ deleted_status: true, receiver_id: receiver, message: `Receiver ${pyStr(receiverId)}'s latest message deleted successfully.` }),
            { ...s, inbox: [...inbox.slice(0, at), ...inbox.slice(at + 1)] }
          ]
        }
      }
      return [dict({ error: `Receiver ID ${pyStr(receiverId)} not found.` }), s]
    }),
    view_messages_sent: query([], (s) => {
      if (!truthy(s.current_user)) return loggedOut
      let sent = PyDict.empty
      for (const message of pyIter(s.inbox)) {
        const [receiver, content] = firstItem(message)
        const prior = sent.get(receiver)
        sent = sent.set(receiver, prior === undefined ? [content] : [...(prior as ReadonlyArray<Py>), content])
      }
      return dict({ messages: sent })
    }),
    add_contact: command(["user_name"], (s, userName) => {
      if (pyIn(userName, s.user_map)) return [dict({ error: `User name '${pyStr(userName)}' already exists.` }), s]
      const count = pyAdd(s.user_count, 1)
      const digits = pyStr(count)
      const userId = `USR${digits.startsWith("-") ? "-" + digits.slice(1).padStart(2, "0") : digits.padStart(3, "0")}`
      const next = { ...s, user_count: count }
      if (pyIn(userId, asDict(s.user_map, "values").values())) return [dict({ error: `User ID '${userId}' already exists.` }), next]
      return [
        dict({ added_status: true, user_id: userId, message: `Contact '${pyStr(userName)}' added successfully.` }),
        { ...next, user_map: asDict(s.user_map, "__setitem__").set(userName, userId) }
      ]
    }),
    search_messages: query(["keyword"], (s, keyword) => {
      if (!truthy(s.current_user)) return loggedOut
      const k = asStr(keyword, "lower").toLowerCase()
      const results: Array<Py> = []
      for (const message of pyIter(s.inbox)) {
        const [receiver, content] = firstItem(message)
        if (asStr(content, "lower").toLowerCase().includes(k)) results.push(dict({ receiver_id: receiver, message: content }))
      }
      return dict({ results })
    }),
    get_message_stats: query([], (s) => {
      if (!truthy(s.current_user)) return loggedOut
      let received = 0
      let contacts = PySet.of([])
      for (const message of pyIter(s.inbox)) {
        const [receiver] = firstItem(message)
        received++
        contacts = contacts.add(receiver)
      }
      return dict({ stats: dict({ received_count: received, total_contacts: contacts.size }) })
    })
  }
}
