// Types of build-if-changed.mjs, for the test that drives it.
export declare const BUILD_INPUTS: string[];
export declare const BUILD_OUTPUTS: string[];
export declare const STAMP: string;
export declare function inputsDigest(root: string): string;
export declare function outputsFingerprint(root: string): string;
export declare function buildReason(root: string): string | null;
export declare function recordBuild(root: string, inputs?: string): void;
