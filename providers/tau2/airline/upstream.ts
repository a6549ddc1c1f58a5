/** Airline's files made from upstream code (common/fromSource.ts): tools.json and tools-types.json. */
import { type Rendering, source, toolsRendering } from "../common/fromSource.ts"

export const renderings: ReadonlyArray<Rendering> = [
  toolsRendering("tau2/airline", "AirlineTools", [
    source("src/tau2/domains/airline/tools.py", "3987f21c286314cb48764f97052934ff4fd60e27a0b2e4a43423911adf8eaa26"),
    source("src/tau2/domains/airline/data_model.py", "a8083e2f590e4b9b66a65d7cd50b7a0247e4fa33d6961aaeb02e4d92488b3cff")
  ])
]
