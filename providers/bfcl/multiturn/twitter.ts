/**
 * TwitterAPI (upstream's posting API): tweets keyed by int id, comments, retweets, a following list.
 *
 * `post_tweet`'s `mentions=[]` default is one list shared by every tweet posted without mentions, and
 * `mention` extends a tweet's list in place: mentioning one such tweet shows in all of them. The
 * state keeps that list once (`sharedMentions`) and such tweets point at it. Upstream shares it
 * across every instance of the process; here it belongs to the instance.
 */
import { type Api, command, dict, getOr, query } from "./api.ts"
import {
  asStr,
  noAttribute,
  type Py,
  pyAdd,
  PyDict,
  pyEq,
  PyError,
  pyIn,
  pyIter,
  type PyObject,
  pyStr,
  toFloat,
  truthy,
  typeName
} from "./py.ts"

export interface TwitterState {
  readonly username: Py
  readonly password: Py
  readonly authenticated: Py
  readonly tweets: Py
  readonly comments: Py
  readonly retweets: Py
  readonly following_list: Py
  readonly tweet_counter: Py
  readonly sharedMentions: ReadonlyArray<Py>
}

/** Where a tweet's `mentions` is the shared default list. */
const SHARED: PyObject = { pyClass: "list" }

const asDict = (v: Py, attr: string): PyDict => {
  if (v instanceof PyDict) return v
  throw noAttribute(v, attr)
}

/** A tweet as Python sees it: the shared default list in place of the marker. */
const materialize = (s: TwitterState, tweet: Py): Py =>
  tweet instanceof PyDict && tweet.get("mentions") === SHARED ? tweet.set("mentions", s.sharedMentions) : tweet

const tweetsOf = (s: TwitterState): PyDict => {
  const t = asDict(s.tweets, "values")
  return t.values().some((x) => x instanceof PyDict && x.get("mentions") === SHARED)
    ? PyDict.of(t.entries().map(([k, v]) => [k, materialize(s, v)] as const))
    : t
}

const item = (v: Py, k: Py): Py => {
  if (v instanceof PyDict) return v.item(k)
  if (typeof v === "string") throw new PyError("TypeError", `string indices must be integers, not '${typeName(k)}'`)
  if (Array.isArray(v)) throw new PyError("TypeError", `list indices must be integers or slices, not ${typeName(k)}`)
  throw new PyError("TypeError", `'${typeName(v)}' object is not subscriptable`)
}

const notAuthenticated = (action: string) => dict({ error: `User not authenticated. Please authenticate before ${action}.` })

const toInt = (v: Py): Py => {
  if (typeof v === "number") return v
  if (typeof v === "string" && /^\s*[+-]?\d[\d_]*\s*$/.test(v)) return Number(v.trim().replaceAll("_", ""))
  return Math.trunc(toFloat(v))
}

export const TwitterAPI: Api<TwitterState> = {
  name: "TwitterAPI",
  load: (config) => {
    const tweets = getOr(config, "tweets", PyDict.empty)
    return {
      username: getOr(config, "username", "john"),
      password: getOr(config, "password", "john123"),
      authenticated: getOr(config, "authenticated", false),
      tweets: PyDict.of(asDict(tweets, "items").entries().map(([k, v]) => [toInt(k), v] as const)),
      comments: getOr(config, "comments", PyDict.empty),
      retweets: getOr(config, "retweets", PyDict.empty),
      following_list: getOr(config, "following_list", ["alice", "bob"]),
      tweet_counter: getOr(config, "tweet_counter", 0),
      sharedMentions: []
    }
  },
  publicState: (s) => [
    ["username", s.username],
    ["password", s.password],
    ["authenticated", s.authenticated],
    ["tweets", tweetsOf(s)],
    ["comments", s.comments],
    ["retweets", s.retweets],
    ["following_list", s.following_list],
    ["tweet_counter", s.tweet_counter]
  ],
  methods: {
    authenticate_twitter: command(["username", "password"], (s, username, password) => {
      if (pyEq(username, s.username) && pyEq(password, s.password)) return [dict({ authentication_status: true }), { ...s, authenticated: true }]
      return [dict({ authentication_status: false }), s]
    }),
    posting_get_login_status: query([], (s) => dict({ login_status: truthy(s.authenticated) })),
    post_tweet: {
      params: ["content", ["tags", []], ["mentions", SHARED]],
      run: (s, [content, tags, mentions]) => {
        if (!truthy(s.authenticated)) return { output: notAuthenticated("posting"), state: s }
        const tweet = dict({ id: s.tweet_counter, username: s.username, content: content ?? null, tags: tags ?? null, mentions: mentions ?? null })
        const next = { ...s, tweets: asDict(s.tweets, "__setitem__").set(s.tweet_counter, tweet), tweet_counter: pyAdd(s.tweet_counter, 1) }
        return { output: materialize(next, tweet), state: next }
      }
    },
    retweet: command(["tweet_id"], (s, tweetId) => {
      if (!truthy(s.authenticated)) return [notAuthenticated("retweeting"), s]
      if (!pyIn(tweetId, s.tweets)) return [dict({ error: `Tweet with ID ${pyStr(tweetId)} not found.` }), s]
      let retweets = asDict(s.retweets, "__setitem__")
      if (!retweets.has(s.username)) retweets = retweets.set(s.username, [])
      const mine = retweets.item(s.username)
      if (pyIn(tweetId, mine)) return [dict({ retweet_status: "Already retweeted" }), { ...s, retweets }]
      if (!Array.isArray(mine)) throw noAttribute(mine, "append")
      return [dict({ retweet_status: "Successfully retweeted" }), { ...s, retweets: retweets.set(s.username, [...mine, tweetId]) }]
    }),
    comment: command(["tweet_id", "comment_content"], (s, tweetId, content) => {
      if (!truthy(s.authenticated)) return [notAuthenticated("commenting"), s]
      if (!pyIn(tweetId, s.tweets)) return [dict({ error: `Tweet with ID ${pyStr(tweetId)} not found.` }), s]
      let comments = asDict(s.comments, "__setitem__")
      if (!comments.has(tweetId)) comments = comments.set(tweetId, [])
      const list = comments.item(tweetId)
      if (!Array.isArray(list)) throw noAttribute(list, "append")
      return [dict({ comment_status: "Comment added successfully" }), { ...s, comments: comments.set(tweetId, [...list, dict({ username: s.username, content })]) }]
    }),
    mention: command(["tweet_id", "mentioned_usernames"], (s, tweetId, usernames) => {
      if (!pyIn(tweetId, s.tweets)) return [dict({ error: `Tweet with ID ${pyStr(tweetId)} not found.` }), s]
      const tweets = asDict(s.tweets, "__getitem__")
      const tweet = tweets.item(tweetId)
      const mentions = item(tweet, "mentions")
      if (mentions === SHARED) return [dict({ mention_status: "Users mentioned successfully" }), { ...s, sharedMentions: [...s.sharedMentions, ...pyIter(usernames)] }]
      if (!Array.isArray(mentions)) throw noAttribute(mentions, "extend")
      const extended = [...mentions, ...pyIter(usernames)]
      return [dict({ mention_status: "Users mentioned successfully" }), { ...s, tweets: tweets.set(tweetId, (tweet as PyDict).set("mentions", extended)) }]
    }),
    follow_user: command(["username_to_follow"], (s, name) => {
      if (!truthy(s.authenticated)) return [notAuthenticated("following"), s]
      if (pyIn(name, s.following_list)) return [dict({ follow_status: false }), s]
      if (!Array.isArray(s.following_list)) throw noAttribute(s.following_list, "append")
      return [dict({ follow_status: true }), { ...s, following_list: [...s.following_list, name] }]
    }),
    list_all_following: query([], (s) => {
      if (!truthy(s.authenticated)) return notAuthenticated("listing following")
      return dict({ following_list: s.following_list })
    }),
    unfollow_user: command(["username_to_unfollow"], (s, name) => {
      if (!truthy(s.authenticated)) return [notAuthenticated("unfollowing"), s]
      if (!pyIn(name, s.following_list)) return [dict({ unfollow_status: false }), s]
      const list = s.following_list as ReadonlyArray<Py>
      const at = list.findIndex((x) => pyEq(x, name))
      return [dict({ unfollow_status: true }), { ...s, following_list: [...list.slice(0, at), ...list.slice(at + 1)] }]
    }),
    get_tweet: query(["tweet_id"], (s, tweetId) => {
      if (!pyIn(tweetId, s.tweets)) return dict({ error: `Tweet with ID ${pyStr(tweetId)} not found.` })
      return materialize(s, asDict(s.tweets, "__getitem__").item(tweetId))
    }),
    get_user_tweets: query(["username"], (s, username) => tweetsOf(s).values().filter((t) => pyEq(item(t, "username"), username))),
    search_tweets: query(["keyword"], (s, keyword) =>
      tweetsOf(s).values().filter((t) => {
        const k = asStr(keyword, "lower").toLowerCase()
        if (asStr(item(t, "content"), "lower").toLowerCase().includes(k)) return true
        return pyIter(item(t, "tags")).map((tag) => asStr(tag, "lower").toLowerCase()).includes(k)
      })),
    get_tweet_comments: query(["tweet_id"], (s, tweetId) => {
      if (!pyIn(tweetId, s.tweets)) return dict({ error: `Tweet with ID ${pyStr(tweetId)} not found.` })
      return asDict(s.comments, "get").get(tweetId) ?? []
    }),
    get_user_stats: query(["username"], (s, username) => {
      const tweetCount = tweetsOf(s).values().filter((t) => pyEq(item(t, "username"), username)).length
      const followingCount = pyEq(username, s.username) ? pyIter(s.following_list).length : 0
      const retweets = asDict(s.retweets, "get")
      retweets.has(username) // an unhashable name raises here, as dict.get does
      const mine = retweets.get(username) ?? []
      return dict({ tweet_count: tweetCount, following_count: followingCount, retweet_count: pyIter(mine).length })
    })
  }
}
