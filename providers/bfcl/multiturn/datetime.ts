/** The one piece of Python's `datetime` the APIs use to read dates. */
import { type Py, PyError, pyRepr, typeError, typeName } from "./py.ts"

/** `datetime.strptime(text, format)` for the two formats used, as epoch seconds (UTC). */
export const strptime = (text: Py, withTime: boolean): number => {
  const format = withTime ? "%Y-%m-%d %H:%M:%S" : "%Y-%m-%d"
  if (typeof text !== "string") throw typeError(`strptime() argument 1 must be str, not ${typeName(text)}`)
  const re = withTime
    ? /^(\d{4})-(1[0-2]|0[1-9]|[1-9])-(3[01]|[12]\d|0[1-9]|[1-9]| [1-9]) (2[0-3]|[01]\d|\d):([0-5]\d|\d):(6[01]|[0-5]\d|\d)/i
    : /^(\d{4})-(1[0-2]|0[1-9]|[1-9])-(3[01]|[12]\d|0[1-9]|[1-9]| [1-9])/i
  const m = re.exec(text)
  if (m === null) throw new PyError("ValueError", `time data ${pyRepr(text)} does not match format ${pyRepr(format)}`)
  if (m[0].length !== text.length) throw new PyError("ValueError", `unconverted data remains: ${text.slice(m[0].length)}`)
  const [y, mo, da, h, mi, se] = m.slice(1).map((x) => Number((x ?? "0").trim()))
  const t = Date.UTC(y as number, (mo as number) - 1, da as number, h ?? 0, mi ?? 0, se ?? 0)
  if (new Date(t).getUTCDate() !== da) throw new PyError("ValueError", "day is out of range for month")
  return t / 1000
}

