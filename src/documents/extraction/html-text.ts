import { Parser } from 'htmlparser2';
import { ValidationFailedError } from '../../common/errors.js';
import { storableText } from './storable-text.js';

/**
 * Deepest element nesting accepted (browsers' parsers stop nesting at 512 too). htmlparser2 keeps its
 * open elements in an array it grows with `unshift`, so N unclosed tags cost N² steps: 200,000 `<b>`
 * took 10 s. Refusing past this depth bounds that work to 512² steps.
 */
export const MAX_HTML_DEPTH = 512;

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'iframe', 'object', 'canvas']);
const BLOCKS = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'body',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'ul',
  'caption',
]);
/**
 * A page's furniture rather than its text: navigation, menus, sidebars, the site's banner and footer.
 * Dropped with everything inside, as browsers' reader modes do, so that "Home | Policies | Contact"
 * never reaches a passage. A `header` or `footer` inside `article` or `main` belongs to the text (an
 * article's title and byline) and is kept. (No class "menu": a restaurant's page keeps its dishes.)
 */
const BOILERPLATE = new Set(['nav', 'aside', 'menu']);
const PAGE_FURNITURE = new Set(['header', 'footer']);
const BOILERPLATE_ROLES = new Set([
  'navigation',
  'banner',
  'contentinfo',
  'complementary',
  'menu',
  'menubar',
  'search',
]);
const BOILERPLATE_CLASSES = new Set([
  'nav',
  'navbar',
  'navigation',
  'breadcrumb',
  'breadcrumbs',
  'sidebar',
  'site-header',
  'site-footer',
  'skip-link',
  'cookie-banner',
]);

function isBoilerplate(name: string, attributes: Partial<Record<string, string>>, inContent: boolean): boolean {
  if (BOILERPLATE.has(name) || (PAGE_FURNITURE.has(name) && !inContent)) return true;
  if (attributes.role && BOILERPLATE_ROLES.has(attributes.role.trim().toLowerCase())) return true;
  const classes = `${attributes.class ?? ''} ${attributes.id ?? ''}`.toLowerCase().split(/\s+/);
  return classes.some((name) => BOILERPLATE_CLASSES.has(name));
}

const HEADINGS: Record<string, string> = { h1: '#', h2: '##', h3: '###', h4: '####', h5: '#####', h6: '######' };

/** Pieces of text joined as they come, a few thousand at a time (see `ontext`). */
class TextPieces {
  private static readonly BATCH = 4096;
  private readonly joined: string[] = [];
  private pending: string[] = [];

  push(piece: string): void {
    this.pending.push(piece);
    if (this.pending.length < TextPieces.BATCH) return;
    this.joined.push(this.pending.join(''));
    this.pending = [];
  }

  text(): string {
    return this.joined.join('') + this.pending.join('');
  }
}

/**
 * Readable text of an HTML page: scripts, styles, the head and the page's furniture (navigation, menus,
 * sidebars, banner and footer: see BOILERPLATE) dropped, entities decoded, block elements
 * on their own paragraphs and headings turned into Markdown headings, so the chunker sees the structure.
 * Returns the page `<title>` separately.
 */
export function htmlToText(html: string): { text: string; title: string | null } {
  // V8 returns a regex replace's result as a rope of its pieces: for a paragraph of 100 characters some
  // 1.5 KB, 13 times the text. Kept until the end, they took more than a worker's heap for a 5 MB page;
  // joined every few thousand, a 10 MB page needs a few MB.
  const out = new TextPieces();
  let skipDepth = 0;
  let inTitle = false;
  let title = '';
  let pre = 0;
  let depth = 0; // the parser's open elements: it reports every open, and a close for each (implied ones too)
  // Per open element: whether it began a skipped stretch of furniture, and whether it is article or main.
  const furniture: boolean[] = [];
  const content: boolean[] = [];
  let contentDepth = 0;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (++depth > MAX_HTML_DEPTH) {
          throw ValidationFailedError.field(
            'file',
            `The HTML nests elements more than ${MAX_HTML_DEPTH} deep (unclosed tags?); it is refused.`,
          );
        }
        if (name === 'title') inTitle = true;
        if (SKIPPED.has(name)) skipDepth++;
        const skipsFurniture = skipDepth === 0 && isBoilerplate(name, attributes, contentDepth > 0);
        furniture.push(skipsFurniture);
        if (skipsFurniture) skipDepth++;
        const isContent = name === 'article' || name === 'main';
        content.push(isContent);
        if (isContent) contentDepth++;
        if (skipDepth > 0) return;
        if (name === 'pre') pre++;
        if (HEADINGS[name]) out.push(`\n\n${HEADINGS[name]} `);
        else if (name === 'br') out.push('\n');
        else if (name === 'li') out.push('\n\n- ');
        else if (name === 'td' || name === 'th') out.push(' ');
        else if (BLOCKS.has(name)) out.push('\n\n');
      },
      ontext(text) {
        if (inTitle) title += text;
        if (skipDepth > 0) return;
        out.push(pre > 0 ? text : text.replace(/\s+/g, ' '));
      },
      onclosetag(name) {
        depth--;
        if (name === 'title') inTitle = false;
        if (content.pop()) contentDepth--;
        if (furniture.pop()) {
          skipDepth = Math.max(0, skipDepth - 1);
          return;
        }
        if (SKIPPED.has(name)) {
          skipDepth = Math.max(0, skipDepth - 1);
          return;
        }
        if (skipDepth > 0) return;
        if (name === 'pre') pre = Math.max(0, pre - 1);
        if (HEADINGS[name] || BLOCKS.has(name)) out.push('\n\n');
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  // Per line: runs of blanks as one space, no white space at either end (whole-text regexes rather
  // than an array of lines, which for a 10 MB page took more than a worker's heap). A lone space is
  // left alone: matched, each would be one more piece of the result.
  const text = storableText(
    out
      .text()
      .replace(/[ \t\u00a0]{2,}|[\t\u00a0]/g, ' ')
      .replace(/(^|\n)[^\S\n]+/g, '$1')
      .replace(/[^\S\n]+(?=\n|$)/g, '')
      .replace(/^(#{1,6}) *\n+/gm, '') // headings left empty
      .replace(/\n{3,}/g, '\n\n')
      .trim(),
  );
  return { text, title: title.replace(/\s+/g, ' ').trim() || null };
}
