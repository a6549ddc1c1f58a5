#!/usr/bin/env node
// Loads the TypeScript entry in this process through tsx, so `npx assay` needs no build step
// and a signal sent to this process reaches the command itself.
import { register } from "tsx/esm/api"

register()
await import("../src/cli/main.ts")
