/**
 * Splits a document's text into chunks of a few hundred words at the most natural boundary available:
 * a Markdown heading (`#`), then a paragraph (blank line), then a sentence, then (for run-on text) a
 * word. Consecutive chunks of one section overlap by a sentence or two so that a passage cut in half
 * is still found whole in one of them; a chunk that starts inside a section repeats its heading.
 *
 * Each chunk is located in the text (`chunkDocument`): `start..end` is the span of the text it covers,
 * from its first piece to its last (the overlap included, a repeated heading not). The chunk's text is
 * that span with its white space normalized (runs of blanks become one space or a blank line), preceded
 * by the section's heading when it repeats one.
 */
export interface ChunkingOptions {
  /** A chunk is closed once it reaches this many words... */
  targetWords: number;
  /** ...and never grows past this many. */
  maxWords: number;
  /** Words carried over from the end of one chunk to the start of the next, within a section. */
  overlapWords: number;
  /** Hard cap on a chunk's characters, for text with few spaces. */
  maxChars: number;
}

export const DEFAULT_CHUNKING: ChunkingOptions = { targetWords: 300, maxWords: 400, overlapWords: 50, maxChars: 6000 };

interface Piece {
  text: string;
  words: number;
  /** Where the piece lies in the original text (UTF-16 offsets). */
  start: number;
  end: number;
  /** First piece of a paragraph (joined with a blank line rather than a space). */
  paragraphStart: boolean;
  /** On a paragraph's first piece: the whole paragraph's words. */
  paragraphWords?: number;
  heading?: boolean;
}

const HEADING = /^#{1,6}\s+\S/;
// A sentence ends with . ! or ? (optionally closed by a quote or bracket) before white space and a
// capital letter, digit or opening quote/bracket.
const SENTENCE_END = /(?<=[.!?]["')\]]?)\s+(?=["'(\[]?[\p{Lu}\d])/gu;

// Every step below is linear in the text and walks it lazily (generators, running totals): a 10 MB
// upload of millions of tiny sentences once took seconds and hundreds of MB here.
function countWords(text: string): number {
  const word = /\S+/g;
  let count = 0;
  while (word.exec(text)) count++;
  return count;
}

/** The parts of `text` between matches of a global `separator`, one at a time (a lazy `split`). */
function* splitLazily(text: string, separator: RegExp): Generator<string> {
  let start = 0;
  for (const match of text.matchAll(separator)) {
    yield text.slice(start, match.index);
    start = match.index + match[0].length;
  }
  yield text.slice(start);
}

/** Paragraphs (blank-line separated) and heading lines, in order. */
function* blocks(text: string): Generator<{ heading: boolean; text: string }> {
  for (const block of splitLazily(text, /\n[ \t]*\n+/g)) {
    let paragraph: string[] = [];
    for (const line of block.split('\n')) {
      if (HEADING.test(line.trim())) {
        const joined = paragraph.join('\n').trim();
        if (joined) yield { heading: false, text: joined };
        paragraph = [];
        yield { heading: true, text: line.trim() };
      } else {
        paragraph.push(line.trimEnd());
      }
    }
    const joined = paragraph.join('\n').trim();
    if (joined) yield { heading: false, text: joined };
  }
}

/** Cuts text that is over the limits into word windows, then character windows. */
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

function* hardSplit(text: string, options: ChunkingOptions): Generator<string> {
  let window: string[] = [];
  const flush = function* () {
    const piece = window.join(' ');
    window = [];
    for (let start = 0; start < piece.length;) {
      let end = Math.min(start + options.maxChars, piece.length);
      // Never between the two halves of a surrogate pair (an emoji): PostgreSQL would store U+FFFD.
      if (end < piece.length && isHighSurrogate(piece.charCodeAt(end - 1)) && end - 1 > start) end--;
      yield piece.slice(start, end);
      start = end;
    }
  };
  for (const [word] of text.matchAll(/\S+/g)) {
    window.push(word);
    if (window.length === options.maxWords) yield* flush();
  }
  if (window.length > 0) yield* flush();
}

/**
 * Finds pieces in the original text. Pieces come in text order and keep every character of it except
 * white space (and the NULs and carriage returns normalization drops), so a piece ends where as many
 * such characters as it holds have been passed: one linear walk over the text in all.
 */
class Locator {
  private position = 0;
  constructor(private readonly text: string) {}

  locate(piece: string): { start: number; end: number } {
    let remaining = 0;
    for (let i = 0; i < piece.length; i++) if (!isSkipped(piece.charCodeAt(i))) remaining++;
    while (this.position < this.text.length && isSkipped(this.text.charCodeAt(this.position))) this.position++;
    const start = this.position;
    let end = start;
    while (remaining > 0 && this.position < this.text.length) {
      if (!isSkipped(this.text.charCodeAt(this.position))) {
        remaining--;
        end = this.position + 1;
      }
      this.position++;
    }
    return { start, end };
  }
}

/** NUL, or white space as `\s` and `trim()` know it (the chunker splits and trims with those). */
function isSkipped(code: number): boolean {
  if (code <= 32) return code === 0 || code === 32 || (code >= 9 && code <= 13);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** A paragraph as sentences (or smaller pieces for run-on text); the first carries the paragraph's size. */
function* pieces(paragraph: string, options: ChunkingOptions, locator: Locator): Generator<Piece> {
  const paragraphWords = countWords(paragraph);
  let first = true;
  for (const sentence of splitLazily(paragraph, SENTENCE_END)) {
    const fits = sentence.length <= options.maxChars && countWords(sentence) <= options.maxWords;
    for (const part of fits ? [sentence] : hardSplit(sentence, options)) {
      const text = part.trim();
      if (!text) continue;
      yield { text, words: countWords(text), paragraphStart: first, paragraphWords, ...locator.locate(text) };
      first = false;
    }
  }
}

function render(parts: Piece[]): string {
  return parts
    .map((part, i) => (i === 0 ? '' : part.paragraphStart || parts[i - 1].heading ? '\n\n' : ' ') + part.text)
    .join('');
}

/** The pieces of the chunk being built, with running totals so that adding a piece costs O(1). */
class Draft {
  parts: Piece[] = [];
  words = 0;
  chars = 0;
  /** The first part is the section's heading, repeated: it lies outside the chunk's span. */
  repeatsHeading = false;
  reset(parts: Piece[], repeatsHeading = false): void {
    this.parts = parts;
    this.repeatsHeading = repeatsHeading;
    this.words = parts.reduce((sum, part) => sum + part.words, 0);
    this.chars = parts.reduce((sum, part) => sum + part.text.length + 2, 0);
  }
  push(part: Piece): void {
    this.parts.push(part);
    this.words += part.words;
    this.chars += part.text.length + 2;
  }
}

/** A chunk and the span of the text it covers: `text.slice(start, end)` (see the top of this file). */
export interface LocatedChunk {
  text: string;
  start: number;
  end: number;
}

export function chunkText(text: string, options: ChunkingOptions = DEFAULT_CHUNKING): string[] {
  return chunkDocument(text, options).map((chunk) => chunk.text);
}

export function chunkDocument(text: string, options: ChunkingOptions = DEFAULT_CHUNKING): LocatedChunk[] {
  const normalized = text.replace(/\r\n?/g, '\n').replace(/\u0000/g, '');
  const locator = new Locator(text);
  const chunks: LocatedChunk[] = [];
  const emit = () => {
    const own = current.repeatsHeading ? current.parts.slice(1) : current.parts;
    const text = render(current.parts);
    if (text.trim() !== '') chunks.push({ text, start: own[0].start, end: own[own.length - 1].end });
  };
  let heading: Piece | null = null; // the current section's heading
  const current = new Draft();
  let carried = 0; // leading pieces of `current` repeated from the previous chunk (heading, overlap)

  const close = (overlap: boolean) => {
    emit();
    const tail: Piece[] = [];
    let tailWords = 0;
    for (let i = current.parts.length - 1; overlap && i >= carried && current.parts[i] !== heading; i--) {
      if (tailWords + current.parts[i].words > options.overlapWords) break;
      tail.push(current.parts[i]);
      tailWords += current.parts[i].words;
    }
    tail.reverse();
    current.reset(overlap && heading ? [heading, ...tail] : tail, overlap && heading !== null);
    carried = current.parts.length;
  };
  const overflows = (piece: Piece) =>
    current.words + piece.words > options.maxWords || current.chars + piece.text.length > options.maxChars;
  const add = (piece: Piece) => {
    const words = current.words;
    // Prefer to end a chunk between paragraphs: do so early when the next paragraph would not fit whole.
    const paragraphBreak =
      piece.paragraphStart &&
      words >= options.targetWords * 0.6 &&
      words + (piece.paragraphWords ?? 0) > options.maxWords;
    if (current.parts.length > carried && (words >= options.targetWords || overflows(piece) || paragraphBreak))
      close(true);
    if (overflows(piece)) {
      // No room after the carried-over heading and overlap: drop them.
      current.reset([]);
      carried = 0;
    }
    current.push(piece);
  };

  for (const block of blocks(normalized)) {
    if (!block.heading) {
      for (const piece of pieces(block.text, options, locator)) add(piece);
      continue;
    }
    const piece: Piece = {
      text: block.text,
      words: countWords(block.text),
      paragraphStart: true,
      heading: true,
      ...locator.locate(block.text),
    };
    // A new section starts a new chunk once the current one has a fair size; small sections share one.
    if (current.parts.length > carried && (current.words >= options.targetWords / 2 || overflows(piece))) close(false);
    if (current.parts.length === carried) {
      current.reset([]); // what was carried over belongs to the previous section
      carried = 0;
    }
    heading = piece;
    current.push(piece);
  }
  if (current.parts.length > carried) emit();
  return chunks;
}
