/**
 * The blind judge: a rubric holding only the task prompt, the candidate's final answer and the
 * work-folder diff (cut at 20 KB), so the judge cannot favour a harness or model by name. Its reply
 * ends with `SCORE: n` (0-10).
 */
import { cutUtf8, DIFF_LIMIT_BYTES } from "./Diff.ts"

export interface JudgeInput {
  readonly taskPrompt: string
  readonly finalAnswer: string
  readonly diff: string
}

export const judgePrompt = (input: JudgeInput): string => {
  const diff = cutUtf8(input.diff, DIFF_LIMIT_BYTES).text
  return [
    "You are grading how well an assistant completed a task in a small project folder.",
    "You see the task, the assistant's final answer and the diff of the files it changed (cut at 20 KB).",
    "You do not know who the assistant is; judge only what is shown.",
    "",
    "Rubric:",
    "- 10: the task is fully and correctly done, the answer is accurate and to the point, no unrelated changes.",
    "- 7-9: done with minor flaws (small inaccuracy, extra noise, a needless change).",
    "- 4-6: partly done, or done with a real error.",
    "- 1-3: attempted but mostly wrong or incomplete.",
    "- 0: not attempted, or harmful changes.",
    "",
    "<task>",
    input.taskPrompt,
    "</task>",
    "",
    "<final_answer>",
    input.finalAnswer === "" ? "(no answer)" : input.finalAnswer,
    "</final_answer>",
    "",
    "<diff>",
    diff === "" ? "(no files changed)" : diff,
    "</diff>",
    "",
    "Give two or three sentences of reasoning, then a last line exactly `SCORE: n` with n an integer from 0 to 10."
  ].join("\n")
}

/** The score of a judge reply: its last `SCORE: n` (0-10, decimals allowed); undefined otherwise. */
export const parseJudgeScore = (reply: string): number | undefined => {
  const all = [...reply.matchAll(/score\s*[:=]\s*\**\s*(\d+(?:\.\d+)?)\s*(?:\/\s*10)?/gi)]
  const last = all[all.length - 1]
  if (last === undefined) return undefined
  const n = Number(last[1])
  return Number.isFinite(n) && n >= 0 && n <= 10 ? n : undefined
}

/** Mean of the available of correctness (0-1) and judge/10; undefined when neither is. */
export const composite = (correctness: number | undefined, judgeScore: number | undefined): number | undefined => {
  const parts = [correctness, judgeScore === undefined ? undefined : judgeScore / 10].filter(
    (x): x is number => x !== undefined
  )
  return parts.length === 0 ? undefined : parts.reduce((a, b) => a + b, 0) / parts.length
}
