/**
 * Splits a document's text into chunks of a few hundred words at the most natural boundary available:
 * a Markdown heading (`#`), then a paragraph (blank line), then a sentence, then (for run-on text) a
 * word. Consecutive chunks of one section overlap by a sentence or two so that a passage cut in half
 * is still found whole in one of them; a chunk that starts inside a section repeats its heading.
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
  /** First piece of a paragraph (joined with a blank line rather than a space). */
  paragraphStart: boolean;
  /** On a paragraph's first piece: the whole paragraph's words. */
  paragraphWords?: number;
  heading?: boolean;
}

const HEADING = /^#{1,6}\s+\S/;
// A sentence ends with . ! or ? (optionally closed by a quote or bracket) before white space and a
// capital letter, digit or opening quote/bracket.
const SENTENCE_END = /(?<=[.!?]["')\]]?)\s+(?=["'(\[]?[\p{Lu}\d])/u;

function countWords(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}

/** Paragraphs (blank-line separated) and heading lines, in order. */
function blocks(text: string): Array<{ heading: boolean; text: string }> {
  const result: Array<{ heading: boolean; text: string }> = [];
  for (const block of text.split(/\n[ \t]*\n+/)) {
    let paragraph: string[] = [];
    const flush = () => {
      const joined = paragraph.join('\n').trim();
      if (joined) result.push({ heading: false, text: joined });
      paragraph = [];
    };
    for (const line of block.split('\n')) {
      if (HEADING.test(line.trim())) {
        flush();
        result.push({ heading: true, text: line.trim() });
      } else {
        paragraph.push(line.trimEnd());
      }
    }
    flush();
  }
  return result;
}

/** Cuts text that is over the limits into word windows, then character windows. */
function hardSplit(text: string, options: ChunkingOptions): string[] {
  const words = text.split(/\s+/).filter(Boolean);
  const pieces: string[] = [];
  for (let i = 0; i < words.length; i += options.maxWords) pieces.push(words.slice(i, i + options.maxWords).join(' '));
  return pieces.flatMap((piece) => {
    if (piece.length <= options.maxChars) return [piece];
    const windows: string[] = [];
    for (let i = 0; i < piece.length; i += options.maxChars) windows.push(piece.slice(i, i + options.maxChars));
    return windows;
  });
}

/** A paragraph as sentences (or smaller pieces for run-on text); the first carries the paragraph's size. */
function pieces(paragraph: string, options: ChunkingOptions): Piece[] {
  const fits = (text: string) => countWords(text) <= options.maxWords && text.length <= options.maxChars;
  const parts = paragraph
    .split(SENTENCE_END)
    .flatMap((sentence) => (fits(sentence) ? [sentence] : hardSplit(sentence, options)))
    .map((text) => text.trim())
    .filter(Boolean);
  const paragraphWords = countWords(paragraph);
  return parts.map((text, index) => ({ text, words: countWords(text), paragraphStart: index === 0, paragraphWords }));
}

function render(parts: Piece[]): string {
  return parts.map((part, i) => (i === 0 ? '' : part.paragraphStart || parts[i - 1].heading ? '\n\n' : ' ') + part.text).join('');
}

export function chunkText(text: string, options: ChunkingOptions = DEFAULT_CHUNKING): string[] {
  const normalized = text.replace(/\r\n?/g, '\n').replace(/\u0000/g, '');
  const chunks: string[] = [];
  const wordsIn = (parts: Piece[]) => parts.reduce((sum, part) => sum + part.words, 0);
  const charsIn = (parts: Piece[]) => parts.reduce((sum, part) => sum + part.text.length + 2, 0);
  let heading: Piece | null = null; // the current section's heading
  let current: Piece[] = [];
  let carried = 0; // leading pieces of `current` repeated from the previous chunk (heading, overlap)

  const close = (overlap: boolean) => {
    chunks.push(render(current));
    const tail: Piece[] = [];
    for (let i = current.length - 1; overlap && i >= carried && current[i] !== heading; i--) {
      if (wordsIn(tail) + current[i].words > options.overlapWords) break;
      tail.unshift(current[i]);
    }
    current = overlap && heading ? [heading, ...tail] : tail;
    carried = current.length;
  };
  const overflows = (piece: Piece) =>
    wordsIn(current) + piece.words > options.maxWords || charsIn(current) + piece.text.length > options.maxChars;
  const add = (piece: Piece) => {
    const words = wordsIn(current);
    // Prefer to end a chunk between paragraphs: do so early when the next paragraph would not fit whole.
    const paragraphBreak = piece.paragraphStart && words >= options.targetWords * 0.6 && words + (piece.paragraphWords ?? 0) > options.maxWords;
    if (current.length > carried && (words >= options.targetWords || overflows(piece) || paragraphBreak)) close(true);
    if (overflows(piece)) {
      // No room after the carried-over heading and overlap: drop them.
      current = [];
      carried = 0;
    }
    current.push(piece);
  };

  for (const block of blocks(normalized)) {
    if (!block.heading) {
      for (const piece of pieces(block.text, options)) add(piece);
      continue;
    }
    const piece: Piece = { text: block.text, words: countWords(block.text), paragraphStart: true, heading: true };
    // A new section starts a new chunk once the current one has a fair size; small sections share one.
    if (current.length > carried && (wordsIn(current) >= options.targetWords / 2 || overflows(piece))) close(false);
    if (current.length === carried) {
      current = []; // what was carried over belongs to the previous section
      carried = 0;
    }
    heading = piece;
    current.push(piece);
  }
  if (current.length > carried) chunks.push(render(current));
  return chunks.filter((chunk) => chunk.trim() !== '');
}
