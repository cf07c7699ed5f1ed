import type { FastifyInstance } from 'fastify';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { BadRequestError, echoed, HttpStatusError, ValidationFailedError } from '../common/errors.js';

const DECODERS: Partial<Record<string, () => NodeJS.ReadWriteStream>> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * Every body but a multipart upload is read as JSON, whatever its Content-Type: `curl -d` says
 * form-urlencoded, and a client that forgot the header should get a validation answer, not a 415.
 * Any JSON value is accepted here (the validation pipe refuses what is not an object); an empty body
 * is no body. A gzip, deflate or brotli body is decoded first, and MAX_BODY_BYTES (Fastify's bodyLimit,
 * 413) applies to the decoded JSON, so a small compressed bomb cannot inflate past it.
 */
export function readEveryBodyAsJson(instance: FastifyInstance): void {
  instance.addHook('preParsing', async (request, _reply, payload) => {
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    if (!encoding || encoding === 'identity' || request.isMultipart()) return payload;
    const decoder = DECODERS[encoding];
    if (!decoder)
      throw new HttpStatusError(
        415,
        `Unsupported Content-Encoding "${echoed(encoding)}": send gzip, deflate, br or none.`,
      );
    // Fastify compares Content-Length with what arrived: tell it the encoded bytes, not the decoded.
    // A corrupt stream fails in zlib with a 400 whose message the error filter never quotes.
    const decoded = Object.assign(payload.pipe(decoder()), { receivedEncodedLength: 0 });
    payload.on('data', (chunk: Buffer) => (decoded.receivedEncodedLength += chunk.length));
    return decoded;
  });
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body: Buffer, done) => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      done(new BadRequestError('Malformed JSON in the request body.'), undefined);
      return;
    }
    // What reads the body next recurses through it (the Idempotency-Key's hash, class-transformer):
    // thousands of nested arrays, well within MAX_BODY_BYTES, overflowed the stack there (a 500).
    if (nestedDeeperThan(value, BODY_DEPTH_MAX))
      done(ValidationFailedError.field('body', `Nested more than ${BODY_DEPTH_MAX} levels deep.`), undefined);
    else done(null, value);
  });
}

/** How deeply a JSON body may nest objects and arrays (none of the API's bodies needs more than a few). */
export const BODY_DEPTH_MAX = 32;

function nestedDeeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (levels === 0) return true;
  return Object.values(value).some((child) => nestedDeeperThan(child, levels - 1));
}
