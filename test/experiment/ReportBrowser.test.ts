/**
 * The HTML report opened in headless Chromium (Debian's `chromium`): it renders its plots,
 * logs no console error and loads nothing. Chromium is required; `.ci/run` installs it.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { inflateSync } from "node:zlib"
import { renderHtml } from "../../src/experiment/Report.ts"
import { sampleReport } from "./sampleReport.ts"

const chromium = process.env["CHROMIUM"] ?? "/usr/bin/chromium"

const chromiumFlags = (profile: string): ReadonlyArray<string> => [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  `--user-data-dir=${profile}`,
  "--enable-logging=stderr",
  "--v=0"
]

const run = (args: ReadonlyArray<string>): Promise<{ readonly stdout: string; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    execFile(chromium, [...args], { timeout: 90_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`chromium ${args.at(-1)} failed: ${error.message}\n${stderr}`))
      else resolve({ stdout, stderr })
    })
  })

/**
 * Lines of Chromium's log that report something from the page: any console message (Chromium
 * logs them as `INFO:CONSOLE:<line>] "..."`), uncaught errors, loads refused or failed.
 */
const pageErrors = (log: string): ReadonlyArray<string> =>
  log
    .split("\n")
    .filter((line) =>
      /:CONSOLE[(:]\d+|Uncaught|Refused to|Content Security Policy|net::ERR_|Failed to load resource/.test(line)
    )

interface Image {
  readonly width: number
  readonly height: number
  /** RGBA, 4 bytes per pixel. */
  readonly rgba: Uint8Array
}

/** Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes). */
const decodePng = (file: Buffer): Image => {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  expect([...file.subarray(0, 8)]).toEqual(signature)
  let offset = 8
  let width = 0
  let height = 0
  let colorType = -1
  const idat: Array<Buffer> = []
  while (offset < file.length) {
    const length = file.readUInt32BE(offset)
    const type = file.toString("ascii", offset + 4, offset + 8)
    const data = file.subarray(offset + 8, offset + 8 + length)
    if (type === "IHDR") {
      width = data.readUInt32BE(0)
      height = data.readUInt32BE(4)
      expect(data[8], "bit depth").toBe(8)
      colorType = data[9] ?? -1
      expect(data[12], "interlace").toBe(0)
    } else if (type === "IDAT") idat.push(data)
    else if (type === "IEND") break
    offset += 12 + length
  }
  expect([2, 6], "colour type RGB or RGBA").toContain(colorType)
  const channels = colorType === 6 ? 4 : 3
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * channels
  const pixels = new Uint8Array(height * stride)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    for (let i = 0; i < stride; i++) {
      const left = i >= channels ? pixels[y * stride + i - channels] ?? 0 : 0
      const up = y > 0 ? pixels[(y - 1) * stride + i] ?? 0 : 0
      const upLeft = y > 0 && i >= channels ? pixels[(y - 1) * stride + i - channels] ?? 0 : 0
      const x = line[i] ?? 0
      let predicted = 0
      if (filter === 1) predicted = left
      else if (filter === 2) predicted = up
      else if (filter === 3) predicted = (left + up) >> 1
      else if (filter === 4) {
        const p = left + up - upLeft
        const pa = Math.abs(p - left)
        const pb = Math.abs(p - up)
        const pc = Math.abs(p - upLeft)
        predicted = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft
      }
      pixels[y * stride + i] = (x + predicted) & 0xff
    }
  }
  const rgba = new Uint8Array(width * height * 4)
  for (let p = 0; p < width * height; p++) {
    rgba[p * 4] = pixels[p * channels] ?? 0
    rgba[p * 4 + 1] = pixels[p * channels + 1] ?? 0
    rgba[p * 4 + 2] = pixels[p * channels + 2] ?? 0
    rgba[p * 4 + 3] = channels === 4 ? pixels[p * channels + 3] ?? 0 : 255
  }
  return { width, height, rgba }
}

const pixelCount = (image: Image, [r, g, b]: readonly [number, number, number]): number => {
  let count = 0
  for (let p = 0; p < image.width * image.height; p++) {
    if (image.rgba[p * 4] === r && image.rgba[p * 4 + 1] === g && image.rgba[p * 4 + 2] === b) count++
  }
  return count
}

const requireChromium = (): void => {
  if (!existsSync(chromium)) {
    throw new Error(`chromium is not installed at ${chromium}: install it (apt-get update && apt-get install -y chromium) or set CHROMIUM`)
  }
}

describe("the HTML report in headless Chromium", () => {
  it("the console check notices a page that errs or loads from the network", { timeout: 120_000 }, async () => {
    requireChromium()
    const dir = mkdtempSync(join(tmpdir(), "assay-report-"))
    try {
      const page = join(dir, "bad.html")
      writeFileSync(
        page,
        `<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'">` +
          `<img src="https://example.invalid/x.png"><script>console.error("boom"); notDefined()</script>`
      )
      const { stderr } = await run([...chromiumFlags(join(dir, "profile")), "--dump-dom", pathToFileURL(page).href])
      const errors = pageErrors(stderr).join("\n")
      expect(errors).toContain("boom")
      expect(errors).toContain("Uncaught ReferenceError")
      expect(errors).toContain("example.invalid")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("shows its plots, with no console error and nothing loaded", { timeout: 240_000 }, async () => {
    requireChromium()
    const dir = mkdtempSync(join(tmpdir(), "assay-report-"))
    try {
      const page = join(dir, "report.html")
      writeFileSync(page, renderHtml(sampleReport))
      const url = pathToFileURL(page).href

      const screenshot = join(dir, "report.png")
      const shot = await run([
        ...chromiumFlags(join(dir, "profile-shot")),
        `--screenshot=${screenshot}`,
        "--window-size=1200,1600",
        url
      ])
      expect(pageErrors(shot.stderr)).toEqual([])

      expect(existsSync(screenshot), `no screenshot at ${screenshot}`).toBe(true)
      const file = readFileSync(screenshot)
      expect(statSync(screenshot).size).toBeGreaterThan(20_000)
      const image = decodePng(file)
      expect([image.width, image.height]).toEqual([1200, 1600])

      // Not blank: many colours, a good share of pixels that are not the white background.
      const colours = new Set<number>()
      let inked = 0
      for (let p = 0; p < image.width * image.height; p++) {
        const r = image.rgba[p * 4] ?? 0
        const g = image.rgba[p * 4 + 1] ?? 0
        const b = image.rgba[p * 4 + 2] ?? 0
        colours.add((r << 16) | (g << 8) | b)
        if (r < 240 || g < 240 || b < 240) inked++
      }
      expect(colours.size).toBeGreaterThan(200)
      expect(inked / (image.width * image.height)).toBeGreaterThan(0.03)
      // The plots are drawn: the candidates' colours fill markers and bars in the first screen.
      for (const colour of [[0x00, 0x72, 0xb2], [0xe6, 0x9f, 0x00], [0x00, 0x9e, 0x73], [0xd5, 0x5e, 0x00]] as const) {
        expect(pixelCount(image, colour), `pixels of rgb(${colour.join(",")})`).toBeGreaterThan(100)
      }

      // The DOM Chromium built holds the plots as SVG and no script.
      const dom = await run([...chromiumFlags(join(dir, "profile-dom")), "--dump-dom", url])
      expect(pageErrors(dom.stderr)).toEqual([])
      expect(dom.stdout.match(/<svg /g)?.length).toBe(7)
      expect(dom.stdout).toContain('class="frontier"')
      expect(dom.stdout.match(/<circle /g)?.length ?? 0).toBeGreaterThan(10)
      expect(dom.stdout).not.toContain("<script")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
