/**
 * The hostile uploads of issue 13, built in memory: shared by the tests (test/documents-hardening*)
 * and `npm run bench -- extraction`.
 */
import { once } from 'node:events';
import { createDeflate } from 'node:zlib';

/** HTML of `count` unclosed `<b>` tags: quadratic work for htmlparser2 (200,000 took 10 s). */
export function unclosedTagsHtml(count) {
  return Buffer.from(`<html><body>${'<b>'.repeat(count)}boom</body></html>`);
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
  const objects = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>'),
    Buffer.concat([Buffer.from(`<< /Length ${stream.length} /Filter /FlateDecode >>\nstream\n`), stream, Buffer.from('\nendstream')]),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
  ];
  const out = [Buffer.from('%PDF-1.4\n')];
  let length = out[0].length;
  const offsets = [];
  objects.forEach((body, index) => {
    offsets.push(length);
    const object = Buffer.concat([Buffer.from(`${index + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')]);
    out.push(object);
    length += object.length;
  });
  const xref = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  out.push(Buffer.from(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`));
  return Buffer.concat(out);
}

/** A multipart body with one `file`, built up front so that sending it costs the client nothing. */
export function multipartFile(name, content) {
  const boundary = `----kqs${Date.now()}`;
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
