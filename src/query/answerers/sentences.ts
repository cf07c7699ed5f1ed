/**
 * Sentences of a block of text, by Unicode's sentence rules (`Intl.Segmenter`, ICU: the same on Node 20
 * and 24), with the breaks ICU gets wrong in English put back together:
 * - after an initial ("John G. Roberts", "J. R. R. Tolkien");
 * - after a title or a Latin abbreviation followed by a capital ("Dr. Smith", "Sen. Kerry", "e.g. Heroin");
 * - inside a run of non-blank characters ("https://example.com/a.b?x=1"): a sentence ends before white
 *   space, so a break with none after it is inside a URL, a path or an e-mail address (text in
 *   Chinese or Japanese, whose full stops need no space, keeps those breaks).
 * ICU itself already keeps "U.S.", "4.7", "security@example.com" and "e.g. heroin" whole.
 */
const SEGMENTER = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Abbreviations followed by a name or a number, never by a new sentence (not "no.", "art." or "sec.":
 * as words, they end sentences).
 */
const TITLES = new Set([
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'mt',
  'ft',
  'gen',
  'col',
  'lt',
  'sgt',
  'capt',
  'cmdr',
  'adm',
  'sen',
  'rep',
  'gov',
  'pres',
  'rev',
  'hon',
  'fr',
  'sr',
  'jr',
  'vol',
  'fig',
  'figs',
  'eq',
  'vs',
  'cf',
  'approx',
  'ca',
  'e.g',
  'i.e',
  'viz',
  'al',
  'jan',
  'feb',
  'mar',
  'apr',
  'aug',
  'sept',
  'sep',
  'oct',
  'nov',
  'dec',
]);

/** Full stops of scripts that write sentences without a space after them. */
const UNSPACED_STOP = /[\u3002\uff01\uff1f\uff0e\u0964]["'\u201d\u2019)\]]*$/u;

/** True when a sentence must not end after `piece` (see the file's comment). */
function breaksTooEarly(piece: string): boolean {
  if (!/\s$/u.test(piece)) return !UNSPACED_STOP.test(piece);
  const text = piece.trimEnd();
  // An initial: one capital letter after a space, an opening bracket or the start.
  if (/(?:^|[\s(\["'\u201c])\p{Lu}\.$/u.test(text)) return true;
  const lastWord = /(?:^|[\s(\["'\u201c])([\p{L}.]+)\.$/u.exec(text)?.[1];
  return lastWord !== undefined && TITLES.has(lastWord.toLowerCase());
}

export interface Sentence {
  text: string;
  /** Where the sentence starts and ends (exclusive) in the text given, white space trimmed. */
  start: number;
  end: number;
}

/** The sentences of `text` in order, each trimmed, with their places in `text`. */
export function sentencesOf(text: string): Sentence[] {
  const sentences: Sentence[] = [];
  let start = -1;
  let end = 0;
  for (const { segment, index } of SEGMENTER.segment(text)) {
    if (start < 0) start = index;
    end = index + segment.length;
    if (breaksTooEarly(segment) && end < text.length) continue;
    pushTrimmed(sentences, text, start, end);
    start = -1;
  }
  if (start >= 0) pushTrimmed(sentences, text, start, end);
  return sentences;
}

function pushTrimmed(sentences: Sentence[], text: string, start: number, end: number): void {
  while (start < end && /\s/u.test(text[start])) start++;
  while (end > start && /\s/u.test(text[end - 1])) end--;
  if (end > start) sentences.push({ text: text.slice(start, end), start, end });
}
