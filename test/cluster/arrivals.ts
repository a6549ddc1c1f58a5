/**
 * What a rate limit is judged by: the times requests reached the server. A loopback model whose
 * node:http server notes each request's arrival (its headers parsed) before answering.
 */
import type { AddressInfo } from "node:net"
import { performance } from "node:perf_hooks"
import { Effect, type Scope } from "effect"
import * as LoopbackServer from "../../src/testkit/LoopbackServer.ts"

export interface Recorded {
  readonly openAiBaseUrl: string
  readonly requests: () => ReadonlyArray<LoopbackServer.LoggedRequest>
  /** arrival times, wall-clock ms (comparable with another process's `performance.timeOrigin + performance.now()`), in order */
  readonly arrivals: () => ReadonlyArray<number>
}

export const startRecorded = (script: ReadonlyArray<LoopbackServer.ScriptTurn>): Effect.Effect<Recorded, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ recorded: Recorded; close: () => Promise<void> }>((resume) => {
      const arrivals: Array<number> = []
      const { handle, server } = LoopbackServer.makeServer({ turns: script })
      // Registered before listening; node emits "request" as soon as the headers are read.
      server.prependListener("request", () => arrivals.push(performance.timeOrigin + performance.now()))
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(Effect.succeed({
          recorded: { openAiBaseUrl: `http://127.0.0.1:${port}/v1`, requests: handle.requests, arrivals: () => arrivals },
          close: () =>
            new Promise<void>((ok) => {
              server.closeAllConnections()
              server.close(() => ok())
            })
        }))
      })
    }),
    ({ close }) => Effect.promise(close)
  ).pipe(Effect.map(({ recorded }) => recorded))

/** The most arrivals in any window [t, t + windowMs): every such window's count is at most this. */
export const maxInWindow = (times: ReadonlyArray<number>, windowMs: number): number => {
  const sorted = [...times].sort((a, b) => a - b)
  let most = 0
  // A window holding the most arrivals can start at one of them.
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (j < sorted.length && sorted[j]! < sorted[i]! + windowMs) j++
    most = Math.max(most, j - i)
  }
  return most
}

/** The shortest time spanned by `n` + 1 consecutive arrivals: the bound of n a window holds iff this is ≥ the window. */
export const tightestSpan = (times: ReadonlyArray<number>, n: number): number => {
  const sorted = [...times].sort((a, b) => a - b)
  let least = Infinity
  for (let i = 0; i + n < sorted.length; i++) least = Math.min(least, sorted[i + n]! - sorted[i]!)
  return least
}
