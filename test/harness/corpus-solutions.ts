/** A correct answer and file changes for each corpus task: proof that every task can be passed. */
import * as fs from "node:fs"
import * as path from "node:path"

export interface Solution {
  readonly answer: string
  readonly apply: (workDir: string) => void
}

const write = (dir: string, rel: string, content: string) => fs.writeFileSync(path.join(dir, rel), content)
const edit = (dir: string, rel: string, f: (s: string) => string) => write(dir, rel, f(fs.readFileSync(path.join(dir, rel), "utf8")))

export const solutions: Readonly<Record<string, Solution>> = {
  "config-port": { answer: "8443", apply: () => {} },
  "count-todos": { answer: "5", apply: () => {} },
  "csv-summary": {
    answer: "The total is 139.72.",
    apply: (d) => write(d, "summary.json", JSON.stringify({ by_category: { books: 49.75, games: 79.98, music: 9.99 }, total: 139.72 }))
  },
  "extract-invoices": {
    answer: "Grand total: 1650.49 EUR",
    apply: (d) =>
      write(
        d,
        "invoices.json",
        JSON.stringify({
          invoices: [
            { number: "INV-1001", customer: "Acme Tools", total: 1250 },
            { number: "INV-1002", customer: "Blue Harbor Ltd", total: 310.5 },
            { number: "INV-1003", customer: "Nordlicht GmbH", total: 89.99 }
          ],
          grand_total: 1650.49
        })
      )
  },
  "fix-median": {
    answer: "It did not sort the values and ignored the even-length case.",
    apply: (d) =>
      write(
        d,
        "stats.py",
        "def median(values):\n    s = sorted(values)\n    m = len(s) // 2\n    return s[m] if len(s) % 2 else (s[m - 1] + s[m]) / 2\n"
      )
  },
  "fix-slugify": {
    answer: "fixed",
    apply: (d) =>
      write(
        d,
        "slug.py",
        [
          "import re",
          "import unicodedata",
          "",
          "",
          "def slugify(title):",
          "    ascii_title = unicodedata.normalize('NFKD', title).encode('ascii', 'ignore').decode()",
          "    return re.sub(r'[^a-z0-9]+', '-', ascii_title.lower()).strip('-')",
          ""
        ].join("\n")
      )
  },
  "license-header": {
    answer: "3 files changed",
    apply: (d) => {
      const h = "# SPDX-License-Identifier: MIT\n"
      edit(d, "pkg/__init__.py", (s) => h + s)
      edit(d, "pkg/sub/deep.py", (s) => h + s)
      edit(d, "pkg/tool.py", (s) => s.replace("python3\n", `python3\n${h}`))
    }
  },
  "plan-split": {
    answer: JSON.stringify({
      subtasks: [
        { id: "s1", module: "auth", goal: "accept login email in any case" },
        { id: "s2", module: "billing", goal: "merge customers whose emails differ only in case" },
        { id: "s3", module: "notifications", goal: "dedupe the email queue case-insensitively" }
      ],
      order: ["s1", "s2", "s3"]
    }),
    apply: () => {}
  },
  "rename-function": {
    answer: "done",
    apply: (d) => {
      edit(d, "shop/pricing.py", (s) => s.replace("def calc(", "def total_price("))
      edit(d, "shop/cart.py", (s) => s.replaceAll("calc", "total_price"))
    }
  },
  "rename-photos": {
    answer: "Renamed 3 files.",
    apply: (d) => {
      for (const n of ["IMG_0001", "IMG_0002", "holiday"]) fs.renameSync(path.join(d, "photos", `${n}.JPG`), path.join(d, "photos", `${n}.jpg`))
    }
  },
  "review-patch": { answer: "REJECT\nOff-by-one: page 1 now skips the first page of items.", apply: () => {} },
  "triage-logs": { answer: "cache\nThe cache ran out of memory at 10:14:08, before orders and api failed.", apply: () => {} },
  "write-brief": {
    answer: "brief written",
    apply: (d) =>
      write(
        d,
        "BRIEF.md",
        "Change slug.py so tests/test_slug.py passes. Run `python3 -m unittest discover -s tests`. Done = all tests pass.\n"
      )
  }
}
