import { readFile } from 'node:fs/promises';
import { ValidationFailedError } from '../../common/errors.js';
import type { IndexedChunk } from '../../retrieval/search-index.repository.js';
import { passagesOf } from '../passages.js';
import { WORKER_READY } from '../workers/worker-pool.js';
import { type DocumentContentType, extractText } from './extract-upload.js';

/**
 * What the extraction workers do: the text and chunks of a file (given by the path of its spooled
 * copy, see DocumentExtractor.extract), or the chunks of a text.
 */
export type ExtractionRequest =
  { kind: 'extract'; path: string; contentType: DocumentContentType } | { kind: 'chunk'; text: string };

/** `refusal`: why the file is refused, for the client (a 400 naming `file`). */
export type ExtractionReply = { text: string; chunks: IndexedChunk[] } | { refusal: string } | { failure: string };

async function handle(request: ExtractionRequest): Promise<ExtractionReply> {
  try {
    if (request.kind === 'chunk') return { text: request.text, chunks: passagesOf(request.text, false) };
    const text = await extractText(await readFile(request.path), request.contentType);
    return { text, chunks: passagesOf(text, request.contentType === 'application/pdf') };
  } catch (error) {
    if (error instanceof ValidationFailedError) return { refusal: Object.values(error.fields)[0][0] };
    return { failure: String((error as Error | null | undefined)?.stack ?? error) };
  }
}

// A worker process of the extraction pool (WorkerPool): one request at a time, one reply each.
process.on('message', (request: ExtractionRequest) => {
  void handle(request).then((reply) => process.send?.(reply));
});
// The service went away (even killed): so does its worker.
process.on('disconnect', () => process.exit(0));
process.send?.(WORKER_READY);
