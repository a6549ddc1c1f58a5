export * as Canonical from "./Canonical.ts"
export * as ContentId from "./ContentId.ts"
