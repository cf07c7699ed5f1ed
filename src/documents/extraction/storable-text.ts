const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Extracted text as PostgreSQL can store it: no U+0000 (text cannot hold it) and no lone surrogates
 * (not encodable as UTF-8), which PDF text layers and HTML entities can produce.
 */
export function storableText(text: string): string {
  return text.replace(/\u0000/g, '').replace(LONE_SURROGATE, '\uFFFD');
}
