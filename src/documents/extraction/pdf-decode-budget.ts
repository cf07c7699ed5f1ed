import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

/**
 * pdf.js inflates a stream whole, either through the platform's DecompressionStream or its own
 * decoders' growing buffer (DecodeStream.ensureBuffer), and offers no limit: a 300 KB PDF can ask for
 * gigabytes, outside the V8 heap that a worker's resourceLimits caps. We load pdf.js's worker code with
 * a line added to both places that charges every decoded byte to the document being read, and hand it
 * to pdf.js as its in-thread worker (`globalThis.pdfjsWorker`). pdf.js swallows some errors and
 * carries on, so the caller checks `exceeded` as well as catching the throw.
 */
export class DecodeBudget {
  private used = 0;
  exceeded = false;

  constructor(readonly limitBytes: number) {}

  charge(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limitBytes) this.exceeded = true;
    if (this.exceeded) throw new Error('decoded size limit of the document exceeded');
  }
}

const CHARGES: [anchor: string, charge: string][] = [
  [
    'ensureBuffer(requested) {\n    const buffer = this.buffer;\n',
    'if (requested > buffer.byteLength) globalThis.__pdfDecodeBudget?.charge(requested - buffer.byteLength);',
  ],
  [
    '        chunks.push(chunk);\n        totalLength += chunk.byteLength;\n',
    'globalThis.__pdfDecodeBudget?.charge(chunk.byteLength);',
  ],
];

let installed: Promise<void> | null = null;

/** Makes pdf.js (in this thread) charge its decoding to `globalThis.__pdfDecodeBudget`. */
export function installDecodeBudget(): Promise<void> {
  installed ??= (async () => {
    const path = createRequire(import.meta.url).resolve('pdfjs-dist/legacy/build/pdf.worker.mjs');
    let patched = await readFile(path, 'utf8');
    for (const [anchor, charge] of CHARGES) {
      // Fail closed: a pdf.js update that moves this code must not silently drop the limit.
      if (patched.split(anchor).length !== 2)
        throw new Error(`pdf.js changed: cannot install the decode budget in ${path}`);
      patched = patched.replace(anchor, `${anchor}${charge}\n`);
    }
    const worker: unknown = await import(`data:text/javascript;base64,${Buffer.from(patched).toString('base64')}`);
    (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = worker;
  })();
  return installed;
}

/** Runs `work` with `budget` charged for every byte pdf.js decodes (one document per thread at a time). */
export async function withDecodeBudget<T>(budget: DecodeBudget, work: () => Promise<T>): Promise<T> {
  await installDecodeBudget();
  const globals = globalThis as { __pdfDecodeBudget?: DecodeBudget };
  globals.__pdfDecodeBudget = budget;
  try {
    return await work();
  } finally {
    globals.__pdfDecodeBudget = undefined;
  }
}
