/** Types of `prompt-texts.mjs` (for the test that checks the generated modules are current). */
export declare const ROOT: string
export declare const TARGETS: ReadonlyArray<string>
export declare const MODULE: string
export declare const exportName: (file: string) => string
export declare const textOf: (markdown: string) => string
export declare const placeholdersOf: (text: string) => Array<string>
export declare const render: (dir: string) => string
export declare const stale: () => Array<string>
