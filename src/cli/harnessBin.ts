/**
 * Harness setup read from the environment, in one place: where the pinned agent CLIs are installed
 * and looked for, and the model endpoint harness runs point them at.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { Endpoint } from "../harness/Harness.ts"

const checkoutTools = fileURLToPath(new URL("../../tools/harnesses", import.meta.url))

/**
 * The folder whose package.json and lock file pin the agent CLIs and whose node_modules holds them
 * (`assay harnesses install` installs there): `ASSAY_HARNESS_TOOLS_DIR` when set, else the checkout's tools/harnesses.
 */
export const harnessToolsDir = (): string => {
  const set = process.env["ASSAY_HARNESS_TOOLS_DIR"]
  return set === undefined || set === "" ? checkoutTools : path.resolve(set)
}

/** Folders searched before PATH: `ASSAY_HARNESS_BIN_DIRS` when set (empty = none), else the tools folder's. */
export const harnessBinDirs = (): ReadonlyArray<string> => {
  const set = process.env["ASSAY_HARNESS_BIN_DIRS"]
  return set === undefined ? [path.join(harnessToolsDir(), "node_modules", ".bin")] : set.split(path.delimiter).filter((d) => d !== "")
}

/**
 * A server's root from a base URL given with or without the OpenAI-style `/v1` (and trailing
 * slashes): `http://h:8080/v1/` and `http://h:8080` are both `http://h:8080`. Adapters add the path
 * their wire API needs (`/v1` for OpenAI's, none for Anthropic's), so a `/v1` left on would be doubled.
 */
export const serverRoot = (baseUrl: string): string => baseUrl.trim().replace(/\/+$/, "").replace(/\/v1$/, "")

/** The endpoint harnesses are pointed at when `ASSAY_HARNESS_BASE_URL` is set (key `ASSAY_HARNESS_API_KEY`); else their own login. */
export const harnessEndpoint = (env: NodeJS.ProcessEnv = process.env): Endpoint | undefined => {
  const baseUrl = env["ASSAY_HARNESS_BASE_URL"]
  return baseUrl === undefined || baseUrl.trim() === ""
    ? undefined
    : { baseUrl: serverRoot(baseUrl), apiKey: env["ASSAY_HARNESS_API_KEY"] ?? "sk-assay-local" }
}
