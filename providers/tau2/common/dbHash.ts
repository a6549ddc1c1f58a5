/**
 * What the domains' DB hashes share: upstream hashes `json.dumps(model_dump(), sort_keys=True, ...)`
 * in two forms (the oracle's compact one and `get_db_hash`'s Python default), and each domain
 * streams its records' texts, cached by the (immutable) record value, so a world that shares most
 * records with one already hashed serializes only what changed.
 */
import { dumps, type DumpsOptions, type PyValue } from "./pyjson.ts"

export interface DumpFormat {
  readonly options: DumpsOptions
  /** Record texts by record value; one cache per format and domain (the text depends on the domain's dump). */
  readonly cache: WeakMap<object, string>
}

/** The oracle's canonical dump: sorted keys, compact separators, UTF-8 unescaped. */
export const compactFormat = (): DumpFormat => ({ options: { sortKeys: true, separators: [",", ":"], ensureAscii: false }, cache: new WeakMap() })

/** `json.dumps(d, sort_keys=True, default=str)`: Python's separators, ASCII-escaped. */
export const pythonDefaultFormat = (): DumpFormat => ({ options: { sortKeys: true }, cache: new WeakMap() })

/** A record's text under `format`, dumped once per record value. */
export const recordText = (format: DumpFormat, record: unknown, dump: () => PyValue): string => {
  let text = format.cache.get(record as object)
  if (text === undefined) {
    text = dumps(dump(), format.options)
    format.cache.set(record as object, text)
  }
  return text
}
