// Types of root.mjs, for vitest.config.ts and the tests.
export declare const checkout: string
export declare const userCacheFolder: (name: string, env?: NodeJS.ProcessEnv) => string
export declare const testDataFolder: (env?: NodeJS.ProcessEnv, root?: string) => { readonly dir: string; readonly why: string }
