/**
 * The frozen clock. Upstream's oracle graded with the process clock frozen at 2026-01-01 00:00:00
 * UTC (libfaketime); better-sqlite3 cannot swap SQLite's clock, so the SQL is rewritten instead:
 * every place SQLite reads the current time gets that instant as a literal. A small lexer skips
 * string literals, quoted identifiers and comments, so only real SQL tokens are touched.
 */

export const FROZEN_NOW = "2026-01-01 00:00:00"
const FROZEN_DATE = "2026-01-01"
const FROZEN_TIME = "00:00:00"

/** The keywords SQLite evaluates from the clock, and their frozen values. */
const CLOCK_KEYWORDS: Readonly<Record<string, string>> = {
  current_timestamp: FROZEN_NOW,
  current_date: FROZEN_DATE,
  current_time: FROZEN_TIME
}

/** Date functions that read the clock when called with no argument (`date()` is `date('now')`). */
const DATE_FUNCTIONS = new Set(["date", "time", "datetime", "julianday", "unixepoch"])

const isWordChar = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_$]/.test(c)

/** True when `sql` reads the clock somewhere (so its result depends on when it runs). */
export const readsClock = (sql: string): boolean => freezeClock(sql) !== sql

/**
 * `sql` with `'now'` (any case, as SQLite matches it), CURRENT_TIMESTAMP/DATE/TIME and argument-less
 * date functions replaced by the frozen instant. Everything else is left byte for byte.
 */
export const freezeClock = (sql: string): string => {
  let out = ""
  let i = 0
  const n = sql.length
  while (i < n) {
    const c = sql[i]!
    if (c === "'") {
      let j = i + 1
      while (j < n) {
        if (sql[j] === "'") {
          if (sql[j + 1] === "'") j += 2
          else break
        } else j++
      }
      const literal = sql.slice(i, j + 1)
      out += literal.toLowerCase() === "'now'" ? `'${FROZEN_NOW}'` : literal
      i = j + 1
    } else if (c === '"' || c === "`" || c === "[") {
      const close = c === "[" ? "]" : c
      let j = i + 1
      while (j < n) {
        if (sql[j] === close) {
          if (close !== "]" && sql[j + 1] === close) j += 2
          else break
        } else j++
      }
      out += sql.slice(i, j + 1)
      i = j + 1
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i)
      const j = end === -1 ? n : end
      out += sql.slice(i, j)
      i = j
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2)
      const j = end === -1 ? n : end + 2
      out += sql.slice(i, j)
      i = j
    } else if (isWordChar(c) && !isWordChar(sql[i - 1])) {
      let j = i
      while (j < n && isWordChar(sql[j])) j++
      const word = sql.slice(i, j)
      const lower = word.toLowerCase()
      const keyword = CLOCK_KEYWORDS[lower]
      if (keyword !== undefined) {
        out += `'${keyword}'`
        i = j
        continue
      }
      if (DATE_FUNCTIONS.has(lower)) {
        const call = /^\s*\(\s*\)/.exec(sql.slice(j))
        if (call !== null) {
          out += `${word}('${FROZEN_NOW}')`
          i = j + call[0].length
          continue
        }
      }
      out += word
      i = j
    } else {
      out += c
      i++
    }
  }
  return out
}
