/**
 * Where benchmark data lives: one folder, `ASSAY_DATA_DIR` when it is set, else the user's cache,
 * `$XDG_CACHE_HOME/assay/data` (`~/.cache/assay/data` when XDG_CACHE_HOME is not set). The data is
 * a copy of pinned upstream files, the same for every clone and every home, so it is kept once per
 * user rather than per checkout. `assay data pull` writes there and every provider reads there,
 * both through `dataRoot`, so the advice of a missing-data error is the command that fixes it.
 */
import { homedir } from "node:os"
import { isAbsolute, join, resolve } from "node:path"
import { Config, Option, Record } from "effect"

/** The variables the data folder depends on. */
export interface DataEnv {
  readonly ASSAY_DATA_DIR?: string | undefined
  readonly XDG_CACHE_HOME?: string | undefined
  readonly HOME?: string | undefined
}

const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s === "" ? undefined : s)

/** The folder used when ASSAY_DATA_DIR is not set (an XDG_CACHE_HOME that is not absolute is ignored, as the XDG spec says). */
export const defaultDataRoot = (env: DataEnv = process.env): string => {
  const xdg = nonEmpty(env.XDG_CACHE_HOME)
  const cache = xdg !== undefined && isAbsolute(xdg) ? xdg : join(nonEmpty(env.HOME) ?? homedir(), ".cache")
  return resolve(cache, "assay", "data")
}

/** The data folder, absolute: `ASSAY_DATA_DIR` (an empty value counts as unset), else `defaultDataRoot`. */
export const dataRoot = (env: DataEnv = process.env): string => {
  const set = nonEmpty(env.ASSAY_DATA_DIR)
  return set !== undefined ? resolve(set) : defaultDataRoot(env)
}

/** The variables of `DataEnv`, read through Effect's Config (so a test can give them with a ConfigProvider). */
export const dataEnvConfig: Config.Config<DataEnv> = Config.all({
  ASSAY_DATA_DIR: Config.option(Config.string("ASSAY_DATA_DIR")),
  XDG_CACHE_HOME: Config.option(Config.string("XDG_CACHE_HOME")),
  HOME: Config.option(Config.string("HOME"))
}).pipe(Config.map((c) => Record.map(c, Option.getOrUndefined)))

/** `dataRoot` of `dataEnvConfig`. */
export const dataRootConfig: Config.Config<string> = Config.map(dataEnvConfig, dataRoot)

/** The folder and why it is that one: "/x (ASSAY_DATA_DIR)" or "/home/u/.cache/assay/data (the default; ASSAY_DATA_DIR is not set)". */
export const describeDataRoot = (root: string, env: DataEnv = process.env): string =>
  root !== dataRoot(env)
    ? root
    : nonEmpty(env.ASSAY_DATA_DIR) !== undefined
    ? `${root} (ASSAY_DATA_DIR)`
    : `${root} (the default; ASSAY_DATA_DIR is not set)`

/** How a benchmark's data is pulled: by URL, or only from a local copy (some files have no upstream blob). */
export type PullKind = "download" | "local-copy"

/** The command that puts a benchmark's files into the data folder. */
export const pullCommand = (benchmark: string, kind: PullKind): string =>
  kind === "download"
    ? `\`assay data pull ${benchmark}\` (or \`assay data pull ${benchmark} --from DIR\` with DIR a local copy laid out like the data folder)`
    : `\`assay data pull ${benchmark} --from DIR\` with DIR a local copy laid out like the data folder (some of its files are made from upstream code and have no download URL)`

/**
 * What a provider says when a file is missing: the folder it looked in and the pull that fills it.
 * `root` is the folder looked in; when it is not `dataRoot()` (a caller's own folder) the pull
 * advice also says to point ASSAY_DATA_DIR at the folder pulled into.
 */
export const missingDataMessage = (benchmark: string, kind: PullKind, file: string, root: string, env: DataEnv = process.env): string =>
  `${file} is missing from the data folder ${describeDataRoot(root, env)}: run ${pullCommand(benchmark, kind)}` +
  (root === dataRoot(env) ? "" : `, with ASSAY_DATA_DIR=${root}`)
