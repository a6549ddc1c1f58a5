/**
 * A child process for the lock tests, run as the command runs (NodeRuntime.runMain, so SIGINT and
 * SIGTERM interrupt it and close its scopes):
 *
 *   node --import tsx test/experiment/homeLocker.ts HOME GO_FILE HOLD_MS [wait]
 *
 * Prints `{"ready":true}`, waits until GO_FILE exists (so that several children, slow to start,
 * try at the same instant), tries the lock, prints one JSON line (`{"taken":true,"holder":...}` or `{"taken":false,"reason":...,"message":...}`),
 * then holds the lock for HOLD_MS (forever when negative) and exits 0, or exits 3 when refused.
 */
import { existsSync } from "node:fs"
import { NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import * as Home from "../../src/experiment/Home.ts"

const [home = "", go = "", hold = "0", wait = ""] = process.argv.slice(2)

const program = Effect.gen(function*() {
  process.stdout.write(JSON.stringify({ ready: true }) + "\n")
  while (!existsSync(go)) yield* Effect.sleep("2 millis")
  const outcome = yield* Effect.either(Home.lock(home, { command: "homeLocker", wait: wait === "wait", pollInterval: "50 millis" }))
  if (outcome._tag === "Left") {
    process.stdout.write(JSON.stringify({ taken: false, reason: outcome.left.reason, message: outcome.left.message }) + "\n")
    process.exitCode = 3
    return
  }
  process.stdout.write(JSON.stringify({ taken: true, holder: outcome.right }) + "\n")
  yield* Number(hold) < 0 ? Effect.never : Effect.sleep(Number(hold))
}).pipe(Effect.scoped)

// runMain adds its SIGINT/SIGTERM listeners only once runFork returns, that is at the program's
// first async step: started at once, a child slowed between its two lines could find GO_FILE at
// its first look and take the lock synchronously, and a SIGTERM then ended it by default, with no
// finalizer run. The command starts the same way (src/cli/command.ts).
NodeRuntime.runMain(Effect.zipRight(Effect.yieldNow(), program), { disableErrorReporting: true, disablePrettyLogger: true })
