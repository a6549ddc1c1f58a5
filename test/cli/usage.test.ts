import { existsSync, rmSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { assay, type Result, tempDir } from "./support.ts"

const temp = tempDir("assay-usage-")
afterAll(() => rmSync(temp, { recursive: true, force: true }))

/** A home that a refused command line must never create. */
const untouched = join(temp, "never")

/** Exit 2 and one line on stderr that starts with `assay: `, nothing on stdout. */
const expectUsageError = (r: Result, ...mentions: ReadonlyArray<string>) => {
  expect(r.code, r.stderr).toBe(2)
  expect(r.stdout).toBe("")
  const lines = r.stderr.trimEnd().split("\n")
  expect(lines, r.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^assay: /)
  expect(r.stderr).not.toContain("[object Object]")
  expect(r.stderr).not.toContain("\x1b")
  for (const m of mentions) expect(r.stderr).toContain(m)
}

/** Runs the command lines three at a time (the machine is small and shared). */
const each = async (lines: ReadonlyArray<ReadonlyArray<string>>): Promise<ReadonlyArray<Result>> => {
  const results: Array<Result> = []
  for (let i = 0; i < lines.length; i += 3) results.push(...(await Promise.all(lines.slice(i, i + 3).map((l) => assay(l)))))
  return results
}

/** The text --help gives one flag: its line and the lines under it, up to the next flag. */
const entryOf = (help: string, flag: string): string => {
  const lines = help.split("\n")
  const start = lines.findIndex((l) => l.startsWith(`  ${flag} `) || l === `  ${flag}`)
  if (start < 0) return ""
  const end = lines.findIndex((l, i) => i > start && /^\s{2}-/.test(l))
  return lines.slice(start, end < 0 ? undefined : end).join(" ").replace(/\s+/g, " ")
}

// A run that would go ahead (a benchmark, --yes, a home) if the bad flag were not refused first.
const wouldRun = ["run", "--benchmark", "ledger", "--candidate", "gold", "--yes", "--home", untouched]

// Each case starts the command once (about a second on a busy 2-core machine).
describe("a command line assay cannot take is one line on stderr and exit 2", { timeout: 120_000 }, () => {
  it("an unknown flag is named, with the flag meant when it is close", async () => {
    expectUsageError(await assay(["run", "--bogus"]), "unknown flag --bogus for run", "assay run --help")
    expectUsageError(await assay(["run", "--candidat", "gold"]), "unknown flag --candidat for run (did you mean --candidate?)")
  })

  it("an unknown command is named with the commands there are", async () => {
    expectUsageError(await assay(["nope"]), "unknown command nope: assay takes plan, run, report", "data", "equivalence")
    expectUsageError(await assay(["veiw"]), "unknown command veiw", "view", "worker")
    expectUsageError(await assay(["data", "nope"]), "unknown command data nope", "pull")
  })

  it("a missing argument or value is named", async () => {
    expectUsageError(await assay(["data", "pull"]), "data pull needs BENCHMARK", "ledger")
    expectUsageError(await assay(["run", "--max-usd"]), "--max-usd needs a value")
    expectUsageError(await assay(["report", "--out"]), "--out needs a value")
  })

  it("numbers out of range or not numbers are refused before a home is created", async () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["--reps", "abc", "a whole number, 1 or more"],
      ["--reps", "0", "a whole number, 1 or more"],
      ["--max-usd", "NaN", "0 or more"],
      ["--max-usd", "Infinity", "0 or more"],
      ["--max-usd", "-1", "0 or more"],
      ["--parallel", "0", "a whole number, 1 or more"],
      ["--parallel", "1.5", "a whole number, 1 or more"],
      ["--timeout-secs", "0", "more than 0"],
      ["--preflight-usd", "-1", "0 or more"]
    ]
    const results = await each(cases.map(([flag, value]) => [...wouldRun, flag, value]))
    cases.forEach(([flag, value, expected], i) => expectUsageError(results[i]!, `${flag} ${value}: expected`, expected))
    expect(existsSync(untouched)).toBe(false)
  })

  it("--faults takes exactly SEED:RATE[:KIND,...]", async () => {
    const values = ["7:", "7", "7:0", "7:1.5", "x:0.3", "7:0.3:bogus", "7:0.3:", "99999999999999999999:0.3"]
    const results = await each(values.map((v) => [...wouldRun, "--faults", v]))
    values.forEach((v, i) => expectUsageError(results[i]!, `--faults ${v}: expected SEED:RATE[:KIND,...]`))
    expectUsageError(results[7]!, "the seed 99999999999999999999 is past 9007199254740991, the largest seed")
    expect(existsSync(untouched)).toBe(false)
  })

  it("a run refused for what it names (benchmark, task, candidate) is one line and creates no home", async () => {
    const run = ["run", "--yes", "--home", untouched]
    const [benchmark, task, candidate] = await each([
      [...run, "--benchmark", "nope"],
      [...run, "--benchmark", "ledger", "--task", "nope"],
      [...run, "--benchmark", "ledger", "--candidate", "nope"]
    ])
    expectUsageError(benchmark!, 'unknown benchmark "nope"')
    expectUsageError(task!, "no task nope in ledger")
    expectUsageError(candidate!, 'unknown candidate "nope"')
    expect(existsSync(untouched)).toBe(false)
  })

  it("a flag followed by another flag instead of its value is named; --judge with --no-judge, and --family without --harness, are refused", async () => {
    const [benchmark, candidate, judges, family] = await each([
      ["run", "--benchmark", "--candidate", "gold", "--yes", "--home", untouched],
      ["run", "--benchmark", "ledger", "--candidate", "--yes", "--home", untouched],
      ["plan", "--benchmark", "ledger", "--candidate", "gold", "--judge", "openai:gpt-4o-mini", "--no-judge", "--home", untouched],
      ["plan", "--benchmark", "ledger", "--candidate", "gold", "--family", "gpt", "--home", untouched]
    ])
    expectUsageError(family!, "--family picks the registry models of agent CLIs (with --harness)")
    expectUsageError(benchmark!, "--benchmark needs a value", "not the flag --candidate")
    expectUsageError(candidate!, "--candidate needs a value", "not the flag --yes")
    expectUsageError(judges!, "--judge openai:gpt-4o-mini and --no-judge ask for opposite things")
    expect(existsSync(untouched)).toBe(false)
  })

  it("a mirror that is not an http(s) URL and a worker port past 65535 are refused before anything starts", async () => {
    const [mirror, port] = await each([
      ["data", "pull", "contract-review", "--mirror", "notaurl"],
      ["worker", "--store", "postgres://assay:pw@127.0.0.1:9/assay", "--port", "99999", "--home", untouched]
    ])
    expectUsageError(mirror!, "--mirror notaurl: expected an http(s) URL")
    expectUsageError(port!, "--port 99999: expected a whole number from 0 to 65535")
    expect(existsSync(untouched)).toBe(false)
  })

  it("--rate without --cluster, or naming a provider no candidate calls, is refused before anything runs", async () => {
    const [alone, stray, none] = await each([
      ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--rate", "openai=5/s", "--yes", "--home", untouched],
      ["run", "--benchmark", "ledger", "--model", "openai:gpt-4o-mini", "--cluster", "--rate", "nosuch=5/s", "--yes", "--home", untouched],
      ["run", "--benchmark", "ledger", "--candidate", "gold", "--cluster", "--rate", "openai=5/s", "--yes", "--home", untouched]
    ])
    expectUsageError(alone!, "--rate limits a cluster's workers together: add --cluster")
    expectUsageError(stray!, "--rate nosuch=5/s names a provider this run does not call (its candidates call openai)")
    expectUsageError(none!, "--rate openai=5/s names a provider this run does not call (no candidate of this run calls a model provider)")
    expect(existsSync(untouched)).toBe(false)
  })

  it("--flag=value is read as --flag value, repeatable flags included", async () => {
    const r = await assay(["plan", "--benchmark=ledger", "--candidate=gold", "--candidate=echo", "--task=ledger-01", "--reps=2", "--home=" + untouched, "--json"])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ cells: { total: 4 } })
    expect(existsSync(untouched)).toBe(false)
  })

  it("values at the edges of what a flag takes are accepted", async () => {
    const r = await assay([
      "run", "--benchmark", "ledger", "--candidate", "gold", "--home", untouched,
      "--max-usd", "0", "--parallel", "1", "--reps", "2", "--timeout-secs", "0.5", "--preflight-usd", "0", "--faults", "7:1:timeout,rate-limit"
    ])
    // The plan, printed without --yes: exit 2 with nothing on stderr, and nothing created.
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toBe("")
    expect(r.stdout).toContain("not run: add --yes to run it")
    expect(existsSync(untouched)).toBe(false)
  })
})

describe("assay worker", { timeout: 120_000 }, () => {
  it("a store it cannot reach is one line naming the store (password hidden) and the cause, exit 1", async () => {
    const r = await assay(["worker", "--store", "postgres://assay:secret-pw@127.0.0.1:9/assay", "--home", untouched])
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr.trimEnd().split("\n")).toEqual([expect.stringMatching(/^assay: .*cannot open the store at postgres:\/\/assay:\*\*\*@127\.0\.0\.1:9\/assay: .*ECONNREFUSED/)])
    expect(r.stderr).not.toContain("secret-pw")
  })
})

describe("--help", { timeout: 120_000 }, () => {
  it("assay run --help through a pipe names assay run, brackets every flag, shows the defaults and has no escape codes", async () => {
    const r = await assay(["run", "--help"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).not.toContain("\x1b")
    expect(r.stdout).not.toContain("$ run")
    expect(r.stdout).toContain("assay run [--benchmark B]... [--candidate C]...")
    expect(r.stdout).toMatch(/\[--max-usd USD\]/)
    expect(r.stdout).toMatch(/\[--yes\]/)
    expect(entryOf(r.stdout, "--home")).toContain("Default: .assay")
    expect(entryOf(r.stdout, "--parallel")).toContain("Default: 4")
    expect(entryOf(r.stdout, "--reps")).toContain("Default: 1")
    expect(entryOf(r.stdout, "--candidate")).toContain("Repeatable")
    expect(r.stdout).not.toContain("(not described)")
  })

  it("every command's help describes every flag it has, and the top one lists the commands", async () => {
    const commands = [["plan"], ["report"], ["data", "pull"], ["equivalence"]]
    const results = await each(commands.map((c) => [...c, "--help"]))
    for (const [i, command] of commands.entries()) {
      const r = results[i]!
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain(`assay ${command.join(" ")}`)
      expect(r.stdout).not.toContain("(not described)")
      expect(r.stdout).not.toContain("\x1b")
    }
    const top = await assay(["--help"])
    expect(top.code, top.stderr).toBe(0)
    for (const c of ["plan", "run", "report", "data pull", "equivalence"]) expect(top.stdout).toContain(`  ${c} `)
  })

  it("no command (assay, assay data) shows the help and exits 2, so a script missing a word fails", async () => {
    const [bare, data] = await each([[], ["data"]])
    expect(bare!.code, bare!.stderr).toBe(2)
    expect(bare!.stdout).toContain("  run ")
    expect(data!.code, data!.stderr).toBe(2)
    expect(data!.stdout).toContain("assay data COMMAND")
  })
})

describe("--version", { timeout: 120_000 }, () => {
  // main.ts answers a lone --version without loading the command; anything else goes to it.
  it("prints the version the help shows, and nothing else", async () => {
    const [alone, help] = await Promise.all([assay(["--version"]), assay(["--help"])])
    expect(alone.code, alone.stderr).toBe(0)
    expect(alone.stdout).toBe("0.1.0\n")
    expect(alone.stderr).toBe("")
    expect(help.stdout).toMatch(/^assay 0\.1\.0: /)
  })
})

describe("run without --yes", { timeout: 120_000 }, () => {
  it("prints no model providers heading when no candidate calls a model", async () => {
    const r = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--home", untouched])
    expect(r.code, r.stderr).toBe(2)
    expect(r.stdout).not.toContain("model providers:")
    expect(existsSync(untouched)).toBe(false)
  })
})

describe("report --out", { timeout: 300_000 }, () => {
  it("into a folder that does not exist fails with one line naming it, exit 1, and creates nothing", async () => {
    const home = join(temp, "home")
    const ran = await assay(["run", "--benchmark", "ledger", "--candidate", "gold", "--yes", "--home", home])
    expect(ran.code, ran.stderr).toBe(0)

    const r = await assay(["report", "--home", home, "--out", "/nonexistent-dir/x.txt"])
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(r.stderr).toContain("the folder /nonexistent-dir does not exist")
    expect(existsSync("/nonexistent-dir")).toBe(false)

    const nested = await assay(["report", "--home", home, "--out", join(home, "missing", "x.txt")])
    expect(nested.code, nested.stderr).toBe(1)
    expect(existsSync(join(home, "missing"))).toBe(false)

    const folder = await assay(["report", "--home", home, "--out", home])
    expect(folder.code, folder.stderr).toBe(1)
    expect(folder.stderr).toContain("is a folder")
  })
})
