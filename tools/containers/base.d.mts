export declare const BASE: { readonly suite: string; readonly variant: string; readonly packages: ReadonlyArray<string> }
export declare const baseTag: string
