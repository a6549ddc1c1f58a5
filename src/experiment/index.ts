/**
 * assay's experiment API (`import … from "assay/experiment"`): running and keeping experiments
 * from a program of one's own — the plan and run (`Runner`), the home's store (`Store`), the
 * checks before a run (`Preflight`) and the report (`Report`). Apart from "assay" itself, whose
 * surface is what a benchmark provider writes against: a provider never needs a runner or a store.
 */
export * as Preflight from "./Preflight.ts"
export * as Report from "./Report.ts"
export * as Runner from "./Runner.ts"
export * as Store from "./Store.ts"
