/**
 * The HTML report opened in headless Chromium (Debian's `chromium`): it renders its plots,
 * logs no console error and loads nothing. Chromium is required; `.ci/run` installs it.
 */
import { describe, expect, it } from "@effect/vitest"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { renderHtml } from "../../src/experiment/Report.ts"
import { dumpDom, type Image, inkOf, requireChromium, screenshot } from "../support/chromium.ts"
import { tempDir } from "../support/tempDirs.ts"
import { sampleReport } from "./sampleReport.ts"

const pixelCount = (image: Image, [r, g, b]: readonly [number, number, number]): number => {
  let count = 0
  for (let p = 0; p < image.width * image.height; p++) {
    if (image.rgba[p * 4] === r && image.rgba[p * 4 + 1] === g && image.rgba[p * 4 + 2] === b) count++
  }
  return count
}

describe("the HTML report in headless Chromium", () => {
  it("the console check notices a page that errs or loads from the network", { timeout: 120_000 }, async () => {
    requireChromium()
    const page = join(tempDir("assay-report-"), "bad.html")
    writeFileSync(
      page,
      `<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'">` +
        `<img src="https://example.invalid/x.png"><script>console.error("boom"); notDefined()</script>`
    )
    const errors = (await dumpDom(pathToFileURL(page).href)).errors.join("\n")
    expect(errors).toContain("boom")
    expect(errors).toContain("Uncaught ReferenceError")
    expect(errors).toContain("example.invalid")
  })

  it("shows its plots, with no console error and nothing loaded", { timeout: 240_000 }, async () => {
    requireChromium()
    const page = join(tempDir("assay-report-"), "report.html")
    writeFileSync(page, renderHtml(sampleReport))
    const url = pathToFileURL(page).href

    const shot = await screenshot(url, 1200, 1600)
    expect(shot.errors).toEqual([])
    expect([shot.image.width, shot.image.height]).toEqual([1200, 1600])
    // Not blank: many colours, a good share of pixels that are not the white background.
    const ink = inkOf(shot.image)
    expect(ink.colours).toBeGreaterThan(200)
    expect(ink.inked).toBeGreaterThan(0.03)
    // The plots are drawn: the candidates' colours fill markers and bars in the first screen.
    for (const colour of [[0x00, 0x72, 0xb2], [0xe6, 0x9f, 0x00], [0x00, 0x9e, 0x73], [0xd5, 0x5e, 0x00]] as const) {
      expect(pixelCount(shot.image, colour), `pixels of rgb(${colour.join(",")})`).toBeGreaterThan(100)
    }

    // The DOM Chromium built holds the plots as SVG and no script.
    const dom = await dumpDom(url)
    expect(dom.errors).toEqual([])
    expect(dom.dom.match(/<svg /g)?.length).toBe(7)
    expect(dom.dom).toContain('class="frontier"')
    expect(dom.dom.match(/<circle /g)?.length ?? 0).toBeGreaterThan(10)
    expect(dom.dom).not.toContain("<script")
  })
})
