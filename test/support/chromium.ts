/**
 * Headless Chromium (Debian's `chromium`, or $CHROMIUM) driven from its command line, for the
 * HTML report and viewer tests: the DOM it built, a screenshot, and the log
 * lines that tell of a page error. Each call gets a profile folder of its own, removed with the
 * test file's temp folders; every Chromium process ends with its call (execFile, with a timeout).
 */
import { execFile } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { inflateSync } from "node:zlib"
import { tempDir } from "./tempDirs.ts"

export const chromium = process.env["CHROMIUM"] ?? "/usr/bin/chromium"

export const requireChromium = (): void => {
  if (!existsSync(chromium)) {
    throw new Error(`chromium is not installed at ${chromium}: install it (apt-get update && apt-get install -y chromium) or set CHROMIUM`)
  }
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
  `--user-data-dir=${profile}`,
  "--enable-logging=stderr",
  "--v=0"
]

const run = (args: ReadonlyArray<string>): Promise<{ readonly stdout: string; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    execFile(chromium, [...flags(tempDir("assay-chromium-")), ...args], { timeout: 90_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`chromium ${args.at(-1)} failed: ${error.message}\n${stderr}`))
      else resolve({ stdout, stderr })
    })
  })

/** Log lines that report something from the page: console messages, uncaught errors, refused or failed loads. */
export const pageErrors = (log: string): ReadonlyArray<string> =>
  log.split("\n").filter((line) => /:CONSOLE[(:]\d+|Uncaught|Refused to|Content Security Policy|net::ERR_|Failed to load resource/.test(line))

/**
 * The DOM after the page loaded and its scripts ran for `virtualMs` of virtual time (timers
 * fire, fetches complete), with the page's errors.
 */
export const dumpDom = async (url: string, virtualMs = 0) => {
  const { stdout, stderr } = await run([...(virtualMs > 0 ? [`--virtual-time-budget=${virtualMs}`] : []), "--dump-dom", url])
  return { dom: stdout, errors: pageErrors(stderr) }
}

export interface Image {
  readonly width: number
  readonly height: number
  readonly rgba: Uint8Array
}

/** Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes). */
export const decodePng = (file: Buffer): Image => {
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
      colorType = data[9] ?? -1
      if (data[8] !== 8 || data[12] !== 0) throw new Error("expected an 8-bit, non-interlaced PNG")
    } else if (type === "IDAT") idat.push(data)
    else if (type === "IEND") break
    offset += 12 + length
  }
  if (colorType !== 2 && colorType !== 6) throw new Error(`PNG colour type ${colorType}: expected RGB or RGBA`)
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
      pixels[y * stride + i] = ((line[i] ?? 0) + predicted) & 0xff
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

/** How much of a screenshot is drawn: distinct colours, and the share of pixels that are not near-white. */
export const inkOf = (image: Image): { readonly colours: number; readonly inked: number } => {
  const colours = new Set<number>()
  let inked = 0
  for (let p = 0; p < image.width * image.height; p++) {
    const r = image.rgba[p * 4] ?? 0
    const g = image.rgba[p * 4 + 1] ?? 0
    const b = image.rgba[p * 4 + 2] ?? 0
    colours.add((r << 16) | (g << 8) | b)
    if (r < 240 || g < 240 || b < 240) inked++
  }
  return { colours: colours.size, inked: inked / (image.width * image.height) }
}

/** A screenshot of the page at `width`×`height`, decoded, with the page's errors. */
export const screenshot = async (url: string, width = 1200, height = 1400) => {
  const file = join(tempDir("assay-shot-"), "page.png")
  const { stderr } = await run([`--screenshot=${file}`, `--window-size=${width},${height}`, url])
  return { image: decodePng(readFileSync(file)), errors: pageErrors(stderr) }
}
