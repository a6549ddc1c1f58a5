import type { Report, Scorecard } from "../../src/experiment/Report.ts"

const card = (fields: Partial<Scorecard> & Pick<Scorecard, "candidate" | "benchmark" | "stratum">): Scorecard => ({
  n: 40,
  meanReward: 0.5,
  interval: [0.35, 0.65],
  passRate: 0.5,
  failures: {},
  tokens: { input: 0, output: 0 },
  costUsd: 0,
  wallSeconds: 1,
  ...fields
})

/** A run over two benchmarks with strata, a candidate of unknown cost and awkward names. */
export const sampleReport: Report = {
  runId: "run-20261130-061500-7f3a9c",
  experimentId: "sha256:3f1d2c9a8b7e6d5c4b3a29180716f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4",
  home: "./.assay",
  cells: { total: 480, ran: 412, kept: 60, stale: 8, skipped: 0, faulted: 3 },
  scorecards: [
    card({
      candidate: "gold",
      benchmark: "bfcl",
      stratum: null,
      n: 120,
      meanReward: 1,
      interval: [1, 1],
      passRate: 1,
      passRateInterval: [0.969, 1],
      failures: { "wrong-function": 0, "wrong-arguments": 0, "no-call": 0 },
      reference: true,
      costUsd: 0,
      wallSeconds: 0.8
    }),
    card({
      candidate: "openai:gpt-4o-mini",
      benchmark: "bfcl",
      stratum: null,
      n: 120,
      meanReward: 0.783,
      interval: [0.708, 0.85],
      passRate: 0.783,
      passRateInterval: [0.701, 0.848],
      failures: { "wrong-function": 9, "wrong-arguments": 14, "no-call": 3 },
      tokens: { input: 1_284_112, output: 40_551 },
      costUsd: 0.2170,
      wallSeconds: 812.4
    }),
    card({
      candidate: "openai:gpt-4o",
      benchmark: "bfcl",
      stratum: null,
      n: 120,
      meanReward: 0.867,
      interval: [0.8, 0.925],
      passRate: 0.867,
      failures: { "wrong-function": 4, "wrong-arguments": 11, "no-call": 1 },
      tokens: { input: 1_284_112, output: 38_020 },
      costUsd: 3.5905,
      wallSeconds: 1534.2
    }),
    card({
      candidate: "anthropic:claude-<sonnet>|x",
      benchmark: "bfcl",
      stratum: null,
      n: 118,
      meanReward: 0.89,
      interval: [0.83, 0.941],
      passRate: 0.89,
      failures: { "wrong-function": 3, "wrong-arguments": 9, "no-call": 1 },
      tokens: { input: 1_401_930, output: 51_200 },
      costUsd: null,
      wallSeconds: 3725
    }),
    card({
      candidate: "echo",
      benchmark: "bfcl",
      stratum: null,
      n: 120,
      meanReward: 0,
      interval: [0, 0],
      passRate: 0,
      failures: { "wrong-function": 0, "wrong-arguments": 0, "no-call": 120 },
      reference: true,
      costUsd: 0,
      wallSeconds: 0.2
    }),
    ...(["simple", "multiple"] as const).flatMap((stratum, i) => [
      card({ candidate: "gold", benchmark: "bfcl", stratum, n: 60, meanReward: 1, interval: [1, 1], passRate: 1 }),
      card({
        candidate: "openai:gpt-4o-mini",
        benchmark: "bfcl",
        stratum,
        n: 60,
        meanReward: 0.85 - i * 0.133,
        interval: [0.75 - i * 0.133, 0.933 - i * 0.133],
        passRate: 0.85 - i * 0.133,
        costUsd: 0.1 + i * 0.017
      }),
      card({
        candidate: "openai:gpt-4o",
        benchmark: "bfcl",
        stratum,
        n: 60,
        meanReward: 0.9 - i * 0.067,
        interval: [0.817 - i * 0.067, 0.967 - i * 0.067],
        passRate: 0.9 - i * 0.067,
        costUsd: 1.7 + i * 0.19
      }),
      card({
        candidate: "anthropic:claude-<sonnet>|x",
        benchmark: "bfcl",
        stratum,
        n: 59,
        meanReward: 0.9 - i * 0.02,
        interval: [0.83 - i * 0.02, 0.96 - i * 0.02],
        passRate: 0.9 - i * 0.02,
        costUsd: null
      })
    ]),
    card({
      candidate: "gold",
      benchmark: "tau2",
      stratum: null,
      n: 60,
      meanReward: 1,
      interval: [1, 1],
      passRate: 1,
      failures: { "db-state": 0, "communicate-info": 0 },
      reference: true,
      costUsd: 0.84,
      wallSeconds: 420.5
    }),
    card({
      candidate: "openai:gpt-4o",
      benchmark: "tau2",
      stratum: null,
      n: 60,
      meanReward: 0.55,
      interval: [0.433, 0.667],
      passRate: 0.55,
      passHatK: [
        { k: 1, value: 0.55 },
        { k: 2, value: 0.41 },
        { k: 4, value: 0.28 }
      ],
      failures: { "db-state": 22, "communicate-info": 9 },
      tokens: { input: 3_020_400, output: 120_330 },
      costUsd: 8.75,
      wallSeconds: 5400
    }),
    card({ candidate: "gold", benchmark: "tau2", stratum: "retail", n: 60, meanReward: 1, interval: [1, 1], passRate: 1 }),
    card({
      candidate: "openai:gpt-4o",
      benchmark: "tau2",
      stratum: "retail",
      n: 60,
      meanReward: 0.55,
      interval: [0.433, 0.667],
      passRate: 0.55,
      costUsd: 8.75
    })
  ],
  comparisons: [
    { a: "openai:gpt-4o", b: "openai:gpt-4o-mini", n: 120, difference: 0.083, interval: [0.017, 0.15], benchmark: "bfcl", stratum: null },
    { a: "anthropic:claude-<sonnet>|x", b: "openai:gpt-4o", n: 118, difference: 0.025, interval: [-0.042, 0.093], benchmark: "bfcl", stratum: null },
    { a: "gold", b: "openai:gpt-4o", n: 60, difference: 0.45, interval: [0.333, 0.567], benchmark: "tau2" }
  ],
  notes: [
    "BFCL: Berkeley Function Calling Leaderboard (Apache-2.0), upstream revision 1a2b3c4.",
    "tau2-bench retail by Sierra Research (MIT)."
  ],
  warnings: ["3 cells faulted and count in no Scorecard."]
}
