/**
 * `--store URL` (or `ASSAY_STORE`): the store in a Postgres database instead of the home's SQLite
 * file, so several machines share one experiment. The home folder still holds what is kept beside
 * the store (each run's results.jsonl) and the writer's lock of this machine.
 */
import { existsSync, statSync } from "node:fs"
import { join, resolve } from "node:path"
import { HelpDoc, Options, ValidationError } from "@effect/cli"
import { Effect, Option } from "effect"
import * as Store from "../experiment/Store.ts"
import { UsageError } from "./benchmarks.ts"

const FORM = "a Postgres URL postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"

/** What is wrong with a `--store` value, or null. */
export const storeProblem = (text: string): string | null => {
  if (!Store.isPostgresUrl(text)) return `expected ${FORM} (without --store the home's SQLite file is the store)`
  try {
    const u = new URL(text)
    if (u.hostname === "") return `expected ${FORM}: it names no host`
  } catch {
    return `expected ${FORM}: it is not a URL`
  }
  return null
}

export const storeOption = Options.text("store").pipe(
  Options.mapEffect((text) => {
    const problem = storeProblem(text)
    // Never echo the URL: it may carry a password.
    return problem === null ? Effect.succeed(text) : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--store ${Store.redactUrl(text)}: ${problem}`)))
  }),
  Options.optional
)

export const storeDoc = {
  value: "URL",
  about: "Keep the store in Postgres (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE) instead of the home's SQLite file, so workers on other " +
    "machines share it; also ASSAY_STORE. The home keeps each run's results.jsonl"
}

/** Where a command's store is: --store, else ASSAY_STORE, else the home's SQLite file. */
export const locationOf = (home: string, store: Option.Option<string>): Store.Location => {
  const fromEnv = process.env.ASSAY_STORE
  const url = Option.getOrElse(store, () => (fromEnv !== undefined && fromEnv !== "" ? fromEnv : null))
  return { home, store: url }
}

/** Whether the store is a Postgres URL (always there to read) or a home's file that exists. */
export const storeExists = (at: Store.Location): boolean =>
  at.store !== null && at.store !== undefined && at.store !== "" ? true : existsSync(join(at.home, "assay.sqlite"))

/** The store as people read its name: the redacted URL, or the home folder. */
export const storeShown = (at: Store.Location): string =>
  at.store !== null && at.store !== undefined && at.store !== "" ? Store.redactUrl(at.store) : resolve(at.home)

/** ASSAY_STORE that is not a Postgres URL is refused as the flag would be. */
export const checkedLocation = (home: string, store: Option.Option<string>): Effect.Effect<Store.Location, UsageError> =>
  Effect.suspend(() => {
    // A home given as a file is named as such by every command, not taken for a home not made yet.
    const stat = statSync(home, { throwIfNoEntry: false })
    if (stat !== undefined && !stat.isDirectory()) {
      return Effect.fail(new UsageError({ detail: `--home ${home}: expected a folder, and ${home} is ${stat.isFile() ? "a file" : "neither a file nor a folder"}` }))
    }
    const at = locationOf(home, store)
    if (Option.isNone(store) && at.store !== null && at.store !== undefined) {
      const problem = storeProblem(at.store)
      if (problem !== null) return Effect.fail(new UsageError({ detail: `ASSAY_STORE=${Store.redactUrl(at.store)}: ${problem}` }))
    }
    return Effect.succeed(at)
  })
