/** Retail's files made from upstream code (common/fromSource.ts): tools.json and tools-types.json. */
import { type Rendering, source, toolsRendering } from "../common/fromSource.ts"

export const retailTools = source("src/tau2/domains/retail/tools.py", "34f4fe9702d36f0dd4697700fbcd63d0cf5386e6eb8e7499aaa336243bad8750")

export const renderings: ReadonlyArray<Rendering> = [toolsRendering("tau2/retail", "RetailTools", [retailTools])]
