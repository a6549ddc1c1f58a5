/**
 * The Harbor task format as read here, without a container: task.toml's fields (as Terminal-Bench
 * 2's tasks write them), the terminal output cut as terminus cuts it, FROM substitution, and which
 * verifiers need the network.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { substitute } from "../../src/container/Engine.ts"
import { limitOutput } from "../../providers/harbor/container.ts"
import { loadTasks, megabytes, readToml, verifierDependencies, verifierNeedsNetwork } from "../../providers/harbor/tasks.ts"
import { tempDir } from "../support/tempDirs.ts"

// As terminal-bench-2/fix-git/task.toml is written upstream.
const tb2Toml = `version = "1.0"

[metadata]
author_name = "TheMikeMerrill"
difficulty = "easy"
category = "software-engineering"
tags = [ "coding", "version-control",]
expert_time_estimate_min = 5.0

[verifier]
timeout_sec = 900.0

[agent]
timeout_sec = 900.0

[environment]
build_timeout_sec = 600.0
docker_image = "alexgshaw/fix-git:20251031" # a comment
cpus = 1
memory = "2G"
storage = "10G"
`

const writeTask = (root: string, id: string, toml: string) => {
  for (const [file, text] of Object.entries({
    "task.toml": toml,
    "instruction.md": "Do it.\n",
    "environment/Dockerfile": "FROM debian:bookworm\n",
    "solution/solve.sh": "true\n",
    "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n"
  })) {
    fs.mkdirSync(path.dirname(path.join(root, id, file)), { recursive: true })
    fs.writeFileSync(path.join(root, id, file), text)
  }
}

describe("the Harbor task format", () => {
  it("reads task.toml's tables and values as Terminal-Bench 2 writes them", () => {
    const toml = readToml(tb2Toml)
    expect(toml["environment"]).toEqual({ build_timeout_sec: 600, docker_image: "alexgshaw/fix-git:20251031", cpus: 1, memory: "2G", storage: "10G" })
    expect(toml["metadata"]?.["tags"]).toEqual(["coding", "version-control"])
    expect(toml[""]).toEqual({ version: "1.0" })
  })

  it.effect("loads a task's timeouts and limits, and refuses a folder whose task lacks a file, naming it", () =>
    Effect.gen(function*() {
      const root = tempDir("assay-harbor-format-")
      writeTask(root, "fix-git", tb2Toml)
      writeTask(root, "small", "[environment]\nmemory_mb = 512\n")
      const [fixGit, small] = yield* loadTasks(root)
      expect(fixGit).toMatchObject({ id: "fix-git", agentTimeoutSeconds: 900, verifierTimeoutSeconds: 900, buildTimeoutSeconds: 600, cpus: 1, memoryMb: 2048, difficulty: "easy" })
      // Harbor's defaults where task.toml says nothing.
      expect(small).toMatchObject({ agentTimeoutSeconds: 600, verifierTimeoutSeconds: 600, cpus: null, memoryMb: 512, network: true })
      fs.rmSync(path.join(root, "small/solution/solve.sh"))
      const refused = yield* Effect.either(loadTasks(root))
      expect(Either.isLeft(refused) && refused.left.message).toContain("task small has no solution/solve.sh")
    }))

  it("sizes: 2G, 512M, 4096 (megabytes)", () => {
    expect([megabytes("2G"), megabytes("512M"), megabytes("4096"), megabytes("lots")]).toEqual([2048, 512, 4096, undefined])
  })

  it("cuts a long output as terminus does: the first and last 5,000 bytes, the interior counted", () => {
    expect(limitOutput("short")).toBe("short")
    const long = "a".repeat(6000) + "b".repeat(6000)
    const cut = limitOutput(long)
    expect(cut).toBe(`${"a".repeat(5000)}\n[... output limited to 10000 bytes; 2000 interior bytes omitted ...]\n${"b".repeat(5000)}`)
  })

  it("substitutes the images a Dockerfile's FROM lines name, and says which", () => {
    const dockerfile = "FROM python:3.13-slim-bookworm AS build\nRUN echo FROM python:3.13-slim-bookworm\nFROM --platform=linux/amd64 ubuntu:24.04\n"
    const { text, applied } = substitute(dockerfile, { "python:3.13-slim-bookworm": "localhost/base:1", "node:20": "localhost/node:1" })
    expect(text).toBe("FROM localhost/base:1 AS build\nRUN echo FROM python:3.13-slim-bookworm\nFROM --platform=linux/amd64 ubuntu:24.04\n")
    expect(applied).toEqual({ "python:3.13-slim-bookworm": "localhost/base:1" })
  })

  it("says why a verifier needs the network (uv from the internet), and not for one that runs pytest as it is", () => {
    expect(verifierNeedsNetwork("curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh\nuvx -p 3.13 -w pytest==8.4.1 pytest /tests/test_outputs.py")).toContain("uv")
    expect(verifierNeedsNetwork("python3 -m pytest /tests/test_outputs.py -rA")).toBeNull()
  })

  it("reads what a test.sh installs before its tests: its apt packages, and the Python packages uvx or pip would fetch, with Debian's stand-ins", () => {
    const script = [
      "apt-get update",
      "apt-get install -y curl vim",
      "curl -LsSf https://astral.sh/uv/0.9.5/install.sh | sh",
      "uvx \\",
      "  -p 3.13 \\",
      "  -w pytest==8.4.1 \\",
      "  -w pytest-json-ctrf==0.3.5 \\",
      "  -w numpy==2.3.3 \\",
      "  --with biopython==1.85 \\",
      "  pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA",
      "pip install pytest==8.4.1 requests==2.32.5 opencv-python==4.11.0.86"
    ].join("\n")
    const deps = verifierDependencies(script)
    // curl only fetches uv; pytest and its report plugin are the runner, which the mode brings.
    expect(deps.apt).toEqual(["vim"])
    expect(deps.python).toEqual([
      { spec: "numpy==2.3.3", module: "numpy", debian: "python3-numpy" },
      { spec: "biopython==1.85", module: "Bio", debian: "python3-biopython" },
      { spec: "requests==2.32.5", module: "requests", debian: "python3-requests" },
      { spec: "opencv-python==4.11.0.86", module: "cv2", debian: "python3-opencv" }
    ])
    expect(verifierDependencies("bash /tests/run.sh\npytest /tests")).toEqual({ apt: [], python: [] })
  })

  it("gives no Debian stand-in for a package test.sh installs from a URL (as sam-cell-seg's uvx -w git+https://…)", () => {
    const script = "uvx -w torch==2.5.1 -w git+https://github.com/ChaoningZhang/MobileSAM.git@${COMMIT_HASH} -w shapely==2.1.1 pytest /tests/test_outputs.py"
    expect(verifierDependencies(script).python.map((d) => d.debian)).toEqual(["python3-torch", "python3-shapely"])
  })
})
