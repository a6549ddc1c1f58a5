/**
 * A download too large to hold in memory (BIRD's `minidev.zip`): streamed to a file while its sha256
 * is computed and its progress shown, then chosen entries unpacked from the file with yauzl (which
 * reads the zip's central directory, so zip64 and entries with data descriptors are handled, and
 * nothing outside the chosen entries is written).
 */
import { createHash } from "node:crypto"
import { createWriteStream, mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import * as http from "node:http"
import type { IncomingMessage } from "node:http"
import * as https from "node:https"
import { Transform } from "node:stream"
import { pipeline } from "node:stream/promises"
import { Effect } from "effect"
import * as yauzl from "yauzl"

/** Bytes so far and the total when the server says it. */
export type Progress = (got: number, total: number | null) => void

const MiB = 1024 * 1024

/**
 * A progress line on `out`: redrawn in place on a terminal, else one line per 10% (or per 64 MiB when
 * the size is unknown), so a log file stays short.
 */
export const progressLine = (out: NodeJS.WriteStream, what: string): { readonly progress: Progress; readonly done: () => void } => {
  let shown = -1
  const text = (got: number, total: number | null) =>
    total === null || total === 0
      ? `${what}: ${(got / MiB).toFixed(1)} MiB`
      : `${what}: ${(got / MiB).toFixed(1)} of ${(total / MiB).toFixed(1)} MiB (${Math.floor((got / total) * 100)}%)`
  return {
    progress: (got, total) => {
      if (out.isTTY === true) {
        out.write(`\r${text(got, total)}`)
        return
      }
      const step = total === null || total === 0 ? Math.floor(got / (64 * MiB)) : Math.floor((got / total) * 10)
      if (step !== shown) {
        shown = step
        out.write(`${text(got, total)}\n`)
      }
    },
    done: () => {
      if (out.isTTY === true) out.write("\n")
    }
  }
}

/** The response to GET `url`, following up to five redirects. */
const get = (url: string, hops = 5): Promise<IncomingMessage> =>
  new Promise((ok, fail) => {
    const target = new URL(url)
    const request = (target.protocol === "https:" ? https.get : http.get)(target, (response) => {
      const status = response.statusCode ?? 0
      const location = response.headers.location
      if (status >= 300 && status < 400 && location !== undefined && hops > 0) {
        response.resume()
        get(new URL(location, target).href, hops - 1).then(ok, fail)
      } else if (status !== 200) {
        response.resume()
        fail(new Error(`HTTP ${status}`))
      } else ok(response)
    })
    request.on("error", fail)
  })

/**
 * Streams `url` into `file` (node:http, not fetch: undici 7.30's fetch asserted on a server closing
 * while a slow disk had paused the body); the sha256 of what arrived and its size.
 */
export const downloadToFile = (url: string, file: string, progress: Progress): Effect.Effect<{ readonly sha256: string; readonly bytes: number }, string> =>
  Effect.tryPromise({
    try: async () => {
      if (!/^https?:$/.test(new URL(url).protocol)) throw new Error("only http and https URLs are downloaded")
      const response = await get(url)
      const length = Number(response.headers["content-length"])
      const total = Number.isFinite(length) && length > 0 ? length : null
      const hash = createHash("sha256")
      let got = 0
      mkdirSync(dirname(file), { recursive: true })
      await pipeline(
        response,
        new Transform({
          transform(chunk: Buffer, _encoding, next) {
            hash.update(chunk)
            got += chunk.length
            progress(got, total)
            next(null, chunk)
          }
        }),
        createWriteStream(file)
      )
      if (total !== null && got !== total) throw new Error(`the server announced ${total} bytes and sent ${got}`)
      return { sha256: hash.digest("hex"), bytes: got }
    },
    catch: (e) => `cannot download ${url}: ${e instanceof Error ? e.message : String(e)}`
  })

/** One unpacked entry: the zip's name for it, where it went (relative to the folder), its sha256. */
export interface Unpacked {
  readonly entry: string
  readonly path: string
  readonly sha256: string
}

/**
 * Unpacks the entries of `zip` that `pick` names a destination for (a path relative to `into`),
 * hashing each as it is written. Two entries picked for one destination are an error, as is a
 * destination picked for none (`expected`).
 */
export const unpack = (
  zip: string,
  into: string,
  pick: (entryName: string) => string | null,
  expected: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<Unpacked>, string> =>
  Effect.tryPromise({
    try: async () => {
      const zipfile = await yauzl.openPromise(zip, { lazyEntries: true, autoClose: false })
      const done: Array<Unpacked> = []
      try {
        for await (const entry of zipfile.eachEntry()) {
          if (entry.fileName.endsWith("/")) continue
          const path = pick(entry.fileName)
          if (path === null) continue
          const twice = done.find((d) => d.path === path)
          if (twice !== undefined) throw new Error(`both ${twice.entry} and ${entry.fileName} would be ${path}`)
          const dest = join(into, path)
          mkdirSync(dirname(dest), { recursive: true })
          const hash = createHash("sha256")
          await pipeline(
            await zipfile.openReadStreamPromise(entry),
            new Transform({
              transform(chunk: Buffer, _encoding, next) {
                hash.update(chunk)
                next(null, chunk)
              }
            }),
            createWriteStream(dest)
          )
          done.push({ entry: entry.fileName, path, sha256: hash.digest("hex") })
        }
      } finally {
        zipfile.close()
      }
      const missing = expected.filter((p) => !done.some((d) => d.path === p))
      if (missing.length > 0) {
        throw new Error(`${missing.length} of the ${expected.length} expected file(s) are not in it, e.g. ${missing.slice(0, 3).join(", ")}`)
      }
      return done
    },
    catch: (e) => `cannot unpack ${zip}: ${e instanceof Error ? e.message : String(e)}`
  })
