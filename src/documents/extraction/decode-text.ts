import { ValidationFailedError } from '../../common/errors.js';

/**
 * Bytes of a text upload as a string: UTF-8 (with or without a byte-order mark) or UTF-16 with a BOM.
 * Anything else is refused rather than guessed at: a NUL byte or invalid UTF-8 means it is not text.
 */
export function decodeText(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return strictDecode('utf-16le', bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return strictDecode('utf-16be', bytes.subarray(2));
  if (bytes.includes(0)) {
    throw ValidationFailedError.field('file', 'The file is binary, not text (it contains NUL bytes).');
  }
  return strictDecode('utf-8', bytes);
}

function strictDecode(encoding: 'utf-8' | 'utf-16le' | 'utf-16be', bytes: Buffer): string {
  let text: string;
  try {
    // ignoreBOM false: a UTF-8 BOM is dropped.
    text = new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    const what = encoding === 'utf-8' ? 'UTF-8' : 'UTF-16';
    throw ValidationFailedError.field('file', `The file is not valid ${what} text.`);
  }
  if (text.includes('\u0000'))
    throw ValidationFailedError.field('file', 'The file is binary, not text (it contains NUL characters).');
  return text;
}
