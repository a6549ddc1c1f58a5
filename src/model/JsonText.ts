/**
 * Where each value of a JSON document lies in its text. A client that has to hand on a value as
 * the server wrote it (`5.0` is not `5` to a Python reader) slices it out of the body by these
 * spans instead of re-serialising what JSON.parse made of it.
 */

/** A JSON value and the span `[start, end)` of its text. Strings are decoded; other scalars are not. */
export type Located =
  | { readonly kind: "object"; readonly start: number; readonly end: number; readonly members: ReadonlyArray<readonly [string, Located]> }
  | { readonly kind: "array"; readonly start: number; readonly end: number; readonly items: ReadonlyArray<Located> }
  | { readonly kind: "string"; readonly start: number; readonly end: number; readonly value: string }
  | { readonly kind: "scalar"; readonly start: number; readonly end: number }

class NotJson {
  constructor(readonly at: number) {}
}

const number = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
const literal = /true|false|null/y

/** The located value of `text`, or undefined when `text` is not one JSON value. */
export const locate = (text: string): Located | undefined => {
  let i = 0
  const skip = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r")) i++
  }
  const expect = (c: string) => {
    skip()
    if (text[i] !== c) throw new NotJson(i)
    i++
  }
  const string = (): Located & { readonly kind: "string" } => {
    const start = i
    i++
    while (i < text.length && text[i] !== "\"") i += text[i] === "\\" ? 2 : 1
    if (i >= text.length) throw new NotJson(start)
    i++
    // The span is a whole JSON string: JSON.parse decodes its escapes exactly, or rejects it.
    let decoded: string
    try {
      decoded = JSON.parse(text.slice(start, i)) as string
    } catch {
      throw new NotJson(start)
    }
    return { kind: "string", start, end: i, value: decoded }
  }
  const scalar = (pattern: RegExp): Located => {
    const start = i
    pattern.lastIndex = i
    const m = pattern.exec(text)
    if (m === null) throw new NotJson(i)
    i += m[0].length
    return { kind: "scalar", start, end: i }
  }
  const value = (): Located => {
    skip()
    const start = i
    switch (text[i]) {
      case "{": {
        i++
        const members: Array<readonly [string, Located]> = []
        skip()
        if (text[i] === "}") return (i++, { kind: "object", start, end: i, members })
        for (;;) {
          skip()
          if (text[i] !== "\"") throw new NotJson(i)
          const key = string().value
          expect(":")
          members.push([key, value()])
          skip()
          if (text[i] === ",") i++
          else if (text[i] === "}") return (i++, { kind: "object", start, end: i, members })
          else throw new NotJson(i)
        }
      }
      case "[": {
        i++
        const items: Array<Located> = []
        skip()
        if (text[i] === "]") return (i++, { kind: "array", start, end: i, items })
        for (;;) {
          items.push(value())
          skip()
          if (text[i] === ",") i++
          else if (text[i] === "]") return (i++, { kind: "array", start, end: i, items })
          else throw new NotJson(i)
        }
      }
      case "\"":
        return string()
      case "t":
      case "f":
      case "n":
        return scalar(literal)
      default:
        return scalar(number)
    }
  }
  try {
    const root = value()
    skip()
    return i === text.length ? root : undefined
  } catch (e) {
    // Only this scanner's own failure means "not JSON"; anything else is a defect.
    if (e instanceof NotJson) return undefined
    throw e
  }
}

/** The member `key` of an object (the last one, as JSON.parse keeps), or undefined. */
export const member = (value: Located | undefined, key: string): Located | undefined => {
  if (value?.kind !== "object") return undefined
  let found: Located | undefined
  for (const [k, v] of value.members) if (k === key) found = v
  return found
}

/** The items of an array, or none. */
export const items = (value: Located | undefined): ReadonlyArray<Located> => (value?.kind === "array" ? value.items : [])

/** The decoded value of a string, or undefined. */
export const stringOf = (value: Located | undefined): string | undefined => (value?.kind === "string" ? value.value : undefined)
