import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { cutUtf8, diffTrees } from "../../src/harness/Diff.ts"
import { composite, judgePrompt, parseJudgeScore } from "../../src/harness/Judge.ts"
import { tempDir } from "./support.ts"

describe("blind judge", () => {
  it("the rubric holds the task prompt, the answer and the diff cut at 20 KB, and nothing that names a candidate", () => {
    const diff = "+x\n".repeat(20_000)
    const prompt = judgePrompt({ taskPrompt: "Rename calc.", finalAnswer: "done", diff })
    expect(prompt).toContain("<task>\nRename calc.\n</task>")
    expect(prompt).toContain("<final_answer>\ndone\n</final_answer>")
    expect(prompt).toContain("[cut at 20480 bytes")
    expect(Buffer.byteLength(prompt)).toBeLessThan(20_480 + 2_000)
    expect(prompt).not.toMatch(/codex|claude|qwen|gemini|opencode|\bpi\b/i)
  })

  it("the score is the reply's last SCORE line, within 0-10", () => {
    expect(parseJudgeScore("Good work.\nSCORE: 8")).toBe(8)
    expect(parseJudgeScore("score: 3 at first... final **Score: 7.5/10**")).toBe(7.5)
    expect(parseJudgeScore("SCORE: 11")).toBeUndefined()
    expect(parseJudgeScore("no verdict")).toBeUndefined()
  })

  it("composite is the mean of the available of correctness and judge/10", () => {
    expect(composite(1, 6)).toBeCloseTo(0.8)
    expect(composite(0.5, undefined)).toBe(0.5)
    expect(composite(undefined, 7)).toBeCloseTo(0.7)
    expect(composite(undefined, undefined)).toBeUndefined()
  })
})

describe("work-folder diff", () => {
  it("shows added, removed and changed files with the changed lines", () => {
    const a = tempDir("a")
    const b = tempDir("b")
    fs.writeFileSync(path.join(a, "keep.txt"), "same\n")
    fs.writeFileSync(path.join(b, "keep.txt"), "same\n")
    fs.writeFileSync(path.join(a, "gone.txt"), "bye\n")
    fs.writeFileSync(path.join(a, "edit.py"), "a = 1\nb = 2\nc = 3\n")
    fs.writeFileSync(path.join(b, "edit.py"), "a = 1\nb = 20\nc = 3\n")
    fs.mkdirSync(path.join(b, "new"))
    fs.writeFileSync(path.join(b, "new", "file.md"), "hello\n")
    const d = diffTrees(a, b)
    expect(d.changed).toEqual(["edit.py", "gone.txt", "new/file.md"])
    expect(d.text).toContain("--- a/edit.py\n+++ b/edit.py\n a = 1\n-b = 2\n+b = 20\n c = 3")
    expect(d.text).toContain("--- a/gone.txt\n+++ /dev/null\n-bye")
    expect(d.text).toContain("--- /dev/null\n+++ b/new/file.md\n+hello")
    expect(d.truncated).toBe(false)
    expect(diffTrees(a, a)).toEqual({ text: "", truncated: false, changed: [] })
  })

  it("cuts on a character boundary and says so", () => {
    const cut = cutUtf8("é".repeat(100), 51)
    expect(cut.truncated).toBe(true)
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(51)
    expect(cut.text).not.toContain("\uFFFD")
  })
})
