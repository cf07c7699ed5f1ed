/**
 * The hostile uploads of issue 13, built in memory: shared by the tests (test/documents/documents-hardening*)
 * and `npm run bench -- extraction` / `abuse`.
 */
import { once } from 'node:events';
import { createDeflate } from 'node:zlib';

/** HTML of `count` unclosed `<b>` tags: quadratic work for htmlparser2 (200,000 took 10 s). */
export function unclosedTagsHtml(count) {
  return Buffer.from(`<html><body>${'<b>'.repeat(count)}boom</body></html>`);
}

/** HTML of `count` tiny sibling elements (`<i>x</i>`): shallow, so no depth cap applies; ~1.2 M fit in 10 MB. */
export function tinyElementsHtml(count) {
  return Buffer.from(`<html><body>${'<i>x</i>'.repeat(count)}</body></html>`);
}

/**
 * A PDF whose one page's content stream is `prefix`, then `unit` repeated to `inflatedBytes`,
 * deflated: 300 MB of zeros make a PDF of about 300 KB.
 */
export async function pdfBomb(inflatedBytes, unit = '\0', prefix = '') {
  const deflate = createDeflate({ level: 9 });
  const parts = [];
  deflate.on('data', (part) => parts.push(part));
  deflate.write(Buffer.from(prefix, 'latin1'));
  const block = Buffer.from(unit.repeat(Math.ceil((1 << 20) / unit.length)).slice(0, 1 << 20), 'latin1');
  for (let written = 0; written < inflatedBytes; written += block.length) {
    if (!deflate.write(block)) await once(deflate, 'drain');
  }
  deflate.end();
  await once(deflate, 'end');
  const stream = Buffer.concat(parts);
  return pdfOf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    Buffer.concat([
      Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`),
      stream,
      Buffer.from('\nendstream'),
    ]),
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ]);
}

/** A PDF of `pages` pages sharing one small content stream: ~70,000 pages fit in 10 MB, each read on its own. */
export function manyPagesPdf(pages) {
  const content = 'BT /F1 12 Tf 72 700 Td (Page) Tj ET';
  const firstPage = 5;
  const kids = Array.from({ length: pages }, (_, i) => `${firstPage + i} 0 R`).join(' ');
  return pdfOf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> >>`,
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    ...Array.from({ length: pages }, () => '<< /Type /Page /Parent 2 0 R /Contents 3 0 R >>'),
  ]);
}

/** A PDF file of `objects` (bodies numbered 1..n, the first the catalog), with its cross-reference table. */
function pdfOf(objects) {
  const out = [Buffer.from('%PDF-1.4\n')];
  let length = out[0].length;
  const offsets = [];
  objects.forEach((body, index) => {
    offsets.push(length);
    const object = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`), Buffer.from(body), Buffer.from('\nendobj\n')]);
    out.push(object);
    length += object.length;
  });
  const xref = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  out.push(
    Buffer.from(
      `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(out);
}

/** A multipart body with one `file`, built up front so that sending it costs the client nothing. */
export function multipartFile(name, content) {
  const boundary = `----kqs${Date.now()}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
