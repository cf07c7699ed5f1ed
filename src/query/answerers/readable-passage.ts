/**
 * The prose of a stored passage, as an answer may quote it: Markdown's markers (headings, emphasis,
 * list bullets, link and image syntax, code ticks, quote marks, table rules) and rows of navigation
 * links ("Home | Policies | Contact") taken out. The stored content is never changed (its offsets stay
 * exact); this runs at answer time on the located passage, so documents stored before it benefit too.
 *
 * Returns the passage's blocks (paragraphs, list items, table rows), each one line of plain text.
 * Headings are left out: a title is not a sentence, and joined to the next line it would start one.
 */
export function readableBlocks(passage: string): string[] {
  const blocks: string[] = [];
  let paragraph: string[] = [];
  const flush = () => {
    const text = inlinePlain(paragraph.join(' '));
    if (text !== '' && !isLinkRow(text)) blocks.push(text);
    paragraph = [];
  };
  let fenced = false;
  for (const raw of passage.split(/\r?\n/)) {
    const line = raw.trim();
    if (/^(```|~~~)/.test(line)) {
      flush();
      fenced = !fenced;
      continue;
    }
    if (fenced) continue; // code is not prose an answer quotes
    if (line === '' || /^#{1,6}(\s|$)/.test(line) || /^([-*_=]\s*){3,}$/.test(line) || isTableRule(line)) {
      flush(); // a blank line, a heading, a rule, or a table's |---| row ends the paragraph
      continue;
    }
    // A list item, a quoted line or a table row starts a block of its own.
    const item = /^(?:[-*+•]|\d{1,3}[.)])\s+/.exec(line);
    if (item || line.startsWith('>') || line.startsWith('|')) flush();
    let text = item ? line.slice(item[0].length) : line.replace(/^(>\s?)+/, '');
    if (text.startsWith('|')) text = text.replace(/^\||\|$/g, '').replace(/\s*\|\s*/g, '; ');
    paragraph.push(text);
  }
  flush();
  return blocks;
}

/** Markdown's inline syntax reduced to its text: links and images to their words, no emphasis or ticks. */
function inlinePlain(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1') // ![alt](src)
    .replace(/\[([^\]]+)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, '$1') // [text](url "title")
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1') // [text][ref]
    .replace(/<((?:https?|mailto):[^>\s]+)>/g, '$1') // <https://…>
    .replace(/`+([^`]+)`+/g, '$1')
    .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '$2')
    .replace(/(^|[^\p{L}\p{N}*_])([*_])(?=\S)([^*_]*?\S)\2(?![\p{L}\p{N}])/gu, '$1$3')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

function isTableRule(line: string): boolean {
  return /^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$/.test(line);
}

/**
 * A row of navigation links: three or more short pieces between `|`, `·`, `•` or `»`, none of them a
 * sentence ("Home | Policies | Contact", "Docs › API › Keys").
 */
function isLinkRow(text: string): boolean {
  const pieces = text.split(/\s+[|·•»›>/]\s+/);
  if (pieces.length < 3) return false;
  return pieces.every((piece) => piece.split(/\s+/).length <= 3 && !/[.!?]$/.test(piece));
}
