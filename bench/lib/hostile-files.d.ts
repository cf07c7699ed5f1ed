export function unclosedTagsHtml(count: number): Buffer;
export function pdfBomb(inflatedBytes: number, unit?: string, prefix?: string): Promise<Buffer>;
export function multipartFile(name: string, content: Buffer): { body: Buffer; contentType: string };
export function tinyElementsHtml(count: number): Buffer;
export function manyPagesPdf(pages: number): Buffer;
