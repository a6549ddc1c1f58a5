/**
 * A small driver for headless Chromium (the same binary and flags as chromium.ts) over the
 * DevTools protocol on a pipe (`--remote-debugging-pipe`: NUL-terminated JSON on fds 3 and 4),
 * so a test can click, type, choose, wait for what the page shows and take screenshots, with no
 * driver library. Each browser has a profile folder of its own, removed with the test file's temp
 * folders; `close` ends its process.
 */
import { type ChildProcess, spawn } from "node:child_process"
import type { Readable, Writable } from "node:stream"
import { chromium, decodePng, type Image } from "./chromium.ts"
import { tempDir } from "./tempDirs.ts"

interface Pending {
  readonly resolve: (value: Record<string, unknown>) => void
  readonly reject: (error: Error) => void
  readonly method: string
}

export interface Page {
  /** Loads `url` and waits for its load event. */
  readonly goto: (url: string) => Promise<void>
  /** The value of a JavaScript expression in the page (awaited when a promise). */
  readonly evaluate: <A>(expression: string) => Promise<A>
  /** Waits until the expression is truthy, checked in the page every few milliseconds; fails after `timeoutMs`. */
  readonly waitFor: (expression: string, timeoutMs?: number) => Promise<void>
  /** A mouse click in the middle of the first element matching `selector`, scrolled into view. */
  readonly click: (selector: string) => Promise<void>
  /** Focuses the field and types `text` into it, as a keyboard would (an `input` event per insertion). */
  readonly type: (selector: string, text: string) => Promise<void>
  /** Chooses an option of a select by its value and tells the page (a `change` event, as a user's choice does). */
  readonly choose: (selector: string, value: string) => Promise<void>
  /** A screenshot of the viewport, decoded. */
  readonly screenshot: () => Promise<Image>
  /** What the page logged as an error, threw, or was refused (CSP, failed loads), so far. */
  readonly errors: () => ReadonlyArray<string>
  /** Closes the page (its tab). */
  readonly close: () => Promise<void>
}

export interface Browser {
  readonly newPage: (width?: number, height?: number) => Promise<Page>
  readonly close: () => Promise<void>
}

const flags = (profile: string): ReadonlyArray<string> => [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--hide-scrollbars",
  `--user-data-dir=${profile}`,
  "--remote-debugging-pipe",
  "about:blank"
]

/** Starts Chromium; its one connection carries every page's messages (flattened sessions). */
export const launch = async (): Promise<Browser> => {
  const child: ChildProcess = spawn(chromium, [...flags(tempDir("assay-chromium-"))], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] })
  const toBrowser = child.stdio[3] as Writable
  const fromBrowser = child.stdio[4] as Readable
  let stderr = ""
  child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)))
  let nextId = 1
  const pending = new Map<number, Pending>()
  const listeners = new Set<(message: Record<string, unknown>) => void>()
  let buffered = ""
  let gone: Error | null = null
  fromBrowser.on("data", (chunk: Buffer) => {
    buffered += chunk.toString()
    let end = buffered.indexOf("\0")
    while (end >= 0) {
      const message = JSON.parse(buffered.slice(0, end)) as Record<string, unknown>
      buffered = buffered.slice(end + 1)
      end = buffered.indexOf("\0")
      const id = typeof message["id"] === "number" ? message["id"] : null
      if (id !== null) {
        const waiting = pending.get(id)
        pending.delete(id)
        const error = message["error"] as { message?: string } | undefined
        if (error !== undefined) waiting?.reject(new Error(`${waiting.method}: ${error.message ?? JSON.stringify(error)}`))
        else waiting?.resolve((message["result"] ?? {}) as Record<string, unknown>)
      } else for (const listen of listeners) listen(message)
    }
  })
  child.on("exit", (code, signal) => {
    gone = new Error(`chromium exited (${code ?? signal}): ${stderr}`)
    for (const p of pending.values()) p.reject(gone)
    pending.clear()
  })

  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      if (gone !== null) return reject(gone)
      const id = nextId++
      pending.set(id, { resolve, reject, method })
      toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId !== undefined ? { sessionId } : {}) }) + "\0")
    })

  const newPage = async (width = 1200, height = 1400): Promise<Page> => {
    const { targetId } = await send("Target.createTarget", { url: "about:blank" }) as { targetId: string }
    const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true }) as { sessionId: string }
    const call = (method: string, params: Record<string, unknown> = {}) => send(method, params, sessionId)
    const errors: Array<string> = []
    const loaded: Array<() => void> = []
    listeners.add((m) => {
      if (m["sessionId"] !== sessionId) return
      const params = (m["params"] ?? {}) as Record<string, unknown>
      if (m["method"] === "Page.loadEventFired") loaded.splice(0).forEach((done) => done())
      if (m["method"] === "Runtime.exceptionThrown") errors.push(`Uncaught ${JSON.stringify(params["exceptionDetails"])}`)
      if (m["method"] === "Runtime.consoleAPICalled" && (params["type"] === "error" || params["type"] === "warning")) errors.push(`console ${JSON.stringify(params["args"])}`)
      if (m["method"] === "Log.entryAdded") {
        const entry = (params["entry"] ?? {}) as { level?: string; text?: string; url?: string }
        if (entry.level === "error" || entry.level === "warning") errors.push(`${entry.text ?? ""} ${entry.url ?? ""}`)
      }
    })
    await call("Page.enable")
    await call("Runtime.enable")
    await call("Log.enable")
    await call("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile: false })

    const evaluate = async <A>(expression: string): Promise<A> => {
      const result = await call("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true }) as {
        result: { value?: A }
        exceptionDetails?: { exception?: { description?: string }; text?: string }
      }
      if (result.exceptionDetails !== undefined) {
        throw new Error(`in the page, ${expression.slice(0, 120)}: ${result.exceptionDetails.exception?.description ?? result.exceptionDetails.text}`)
      }
      return result.result.value as A
    }
    const element = (selector: string) => `document.querySelector(${JSON.stringify(selector)})`
    const page: Page = {
      goto: async (url) => {
        const done = new Promise<void>((resolve) => loaded.push(resolve))
        const answer = await call("Page.navigate", { url }) as { errorText?: string }
        if (answer.errorText !== undefined) throw new Error(`cannot load ${url}: ${answer.errorText}`)
        await done
      },
      evaluate,
      waitFor: async (expression, timeoutMs = 30_000) => {
        const until = Date.now() + timeoutMs
        for (;;) {
          const left = until - Date.now()
          // Checked in the page on every frame for a while; a navigation (the page loading itself
          // again) ends the check with its context, and it is asked again in the new one.
          const met = await evaluate<boolean>(`new Promise((resolve) => {
            const until = performance.now() + ${Math.max(0, Math.min(left, 5_000))};
            const check = () => { let ok = false; try { ok = !!(${expression}); } catch (e) {}
              if (ok) resolve(true); else if (performance.now() > until) resolve(false); else setTimeout(check, 10); };
            check();
          })`).catch((e: Error) => {
            if (/context was destroyed|Cannot find context|Inspected target navigated/i.test(e.message)) return false
            throw e
          })
          if (met) return
          if (Date.now() >= until) throw new Error(`the page never showed: ${expression}`)
        }
      },
      click: async (selector) => {
        const box = await evaluate<{ x: number; y: number } | null>(`(() => { const el = ${element(selector)}; if (!el) return null;
          el.scrollIntoView({ block: "center" }); const r = el.getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()`)
        if (box === null) throw new Error(`nothing to click: ${selector}`)
        for (const type of ["mouseMoved", "mousePressed", "mouseReleased"]) {
          await call("Input.dispatchMouseEvent", { type, x: box.x, y: box.y, button: "left", clickCount: type === "mouseMoved" ? 0 : 1 })
        }
      },
      type: async (selector, text) => {
        const found = await evaluate<boolean>(`(() => { const el = ${element(selector)}; if (!el) return false; el.focus(); return true; })()`)
        if (!found) throw new Error(`no field to type into: ${selector}`)
        for (const ch of text) await call("Input.insertText", { text: ch })
      },
      choose: async (selector, value) => {
        const found = await evaluate<boolean>(`(() => { const el = ${element(selector)}; if (!el) return false;
          if (![...el.options].some((o) => o.value === ${JSON.stringify(value)})) return false;
          el.value = ${JSON.stringify(value)}; el.dispatchEvent(new Event("input", { bubbles: true })); el.dispatchEvent(new Event("change", { bubbles: true })); return true; })()`)
        if (!found) throw new Error(`no option ${value} in ${selector}`)
      },
      screenshot: async () => {
        const { data } = await call("Page.captureScreenshot", { format: "png" }) as { data: string }
        return decodePng(Buffer.from(data, "base64"))
      },
      errors: () => [...errors],
      close: async () => {
        await send("Target.closeTarget", { targetId })
      }
    }
    return page
  }

  const close = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once("exit", () => resolve())
      // Browser.close ends it cleanly; the kill is for a browser that no longer reads its pipe.
      send("Browser.close").catch(() => child.kill("SIGKILL"))
    })

  return { newPage, close }
}
