import { chunkDocument, chunkText, DEFAULT_CHUNKING, type ChunkingOptions } from '../../src/documents/chunker.js';

/** Small limits so that a test text of a few lines already spans several chunks. */
const SMALL: ChunkingOptions = { targetWords: 20, maxWords: 30, overlapWords: 8, maxChars: 400 };

const words = (text: string) => text.split(/\s+/).filter(Boolean);
/** `Sentence 3 is about topic three.`-like sentences, five words each, each one findable. */
const sentence = (n: number) => `Sentence ${n} covers item ${n}.`;
const paragraph = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => sentence(from + i)).join(' ');

function expectWithinLimits(chunks: string[], options: ChunkingOptions) {
  for (const chunk of chunks) {
    expect(words(chunk).length).toBeLessThanOrEqual(options.maxWords);
    expect(chunk.length).toBeLessThanOrEqual(options.maxChars);
    expect(chunk.trim()).toBe(chunk);
    expect(chunk).not.toBe('');
  }
}

describe('chunkText', () => {
  describe('empty and tiny input', () => {
    it.each([
      ['an empty string', ''],
      ['white space only', ' \n\t\r\n  \n'],
      ['NUL characters only', '\u0000\u0000'],
    ])('makes no chunk from %s', (_, text) => {
      expect(chunkText(text)).toEqual([]);
    });

    it('keeps a short text as one chunk, trimmed', () => {
      expect(chunkText('  One short sentence.  \n')).toEqual(['One short sentence.']);
    });

    it('keeps a heading with its short section in one chunk', () => {
      expect(chunkText('# Title\n\nSome words here.')).toEqual(['# Title\n\nSome words here.']);
    });

    it('normalises CRLF and CR line ends and drops NUL characters (PostgreSQL text cannot hold them)', () => {
      const [chunk] = chunkText('First line\r\nsecond\u0000 line\rthird line.\r\n\r\nNext paragraph.');
      expect(chunk).toBe('First line\nsecond line\nthird line.\n\nNext paragraph.');
    });
  });

  describe('limits', () => {
    it('never exceeds maxWords or maxChars, whatever the shape of the text', () => {
      const texts = [
        paragraph(1, 60),
        Array.from({ length: 12 }, (_, p) => paragraph(p * 10, 1 + (p % 7))).join('\n\n'),
        'word '.repeat(500), // one run-on sentence
        'x'.repeat(2000), // no spaces at all
        `# Heading\n\n${paragraph(1, 40)}\n\n## Sub\n\n${'y'.repeat(900)} ${paragraph(100, 10)}`,
      ];
      for (const text of texts) expectWithinLimits(chunkText(text, SMALL), SMALL);
    });

    it('holds the default limits on a long document', () => {
      const text = Array.from({ length: 40 }, (_, p) => paragraph(p * 20, 20)).join('\n\n');
      const chunks = chunkText(text);
      expect(chunks.length).toBeGreaterThan(1);
      expectWithinLimits(chunks, DEFAULT_CHUNKING);
    });

    it('cuts a run-on sentence into word windows of maxWords and loses no word', () => {
      const text = Array.from({ length: 95 }, (_, i) => `w${i}`).join(' ');
      const chunks = chunkText(text, { ...SMALL, overlapWords: 0 });
      expect(chunks.map((chunk) => words(chunk).length)).toEqual([30, 30, 30, 5]);
      expect(chunks.join(' ')).toBe(text);
    });

    it('cuts text without spaces into maxChars windows and loses no character', () => {
      const text = 'abcdefghij'.repeat(100);
      const chunks = chunkText(text, SMALL);
      expect(chunks.map((chunk) => chunk.length)).toEqual([400, 400, 200]);
      expect(chunks.join('')).toBe(text);
    });
  });

  describe('boundaries', () => {
    it('keeps every sentence whole in some chunk and in the order of the text', () => {
      const text = paragraph(1, 50);
      const chunks = chunkText(text, SMALL);
      expect(chunks.length).toBeGreaterThan(5);
      for (let n = 1; n <= 50; n++) expect(chunks.some((chunk) => chunk.includes(sentence(n)))).toBe(true);
      for (const chunk of chunks) {
        expect(chunk).toMatch(/^Sentence \d+ /);
        expect(chunk).toMatch(/\.$/);
      }
      const firstSentences = chunks.map((chunk) => Number(/^Sentence (\d+)/.exec(chunk)![1]));
      expect([...firstSentences].sort((a, b) => a - b)).toEqual(firstSentences);
    });

    it('ends a chunk between paragraphs rather than inside one when the next paragraph would not fit', () => {
      // 15 words are short of the 20-word target, but the next paragraph's 20 words would pass maxWords.
      const first = paragraph(1, 3);
      const second = paragraph(10, 4);
      const chunks = chunkText(`${first}\n\n${second}`, { ...SMALL, overlapWords: 0 });
      expect(chunks).toEqual([first, second]);
    });

    it('joins paragraphs with a blank line and sentences with one space', () => {
      const [chunk] = chunkText('One. Two.\n\n\n\nThree.   Four.', SMALL);
      expect(chunk).toBe('One. Two.\n\nThree. Four.');
    });

    it('splits sentences before a non-ASCII capital letter and after closing quotes', () => {
      const text = `${'Un mot de plus. '.repeat(4)}Élodie dit « bonjour ». Il a dit "fin." Último paso.`;
      const chunks = chunkText(text, { targetWords: 2, maxWords: 6, overlapWords: 0, maxChars: 400 });
      expect(chunks).toContain('Élodie dit « bonjour ».');
      expect(chunks).toContain('Il a dit "fin."');
      expect(chunks).toContain('Último paso.');
    });

    it('does not split after an abbreviation followed by a lower-case word', () => {
      const chunks = chunkText('See e.g. the manual for details. Then go on.', {
        targetWords: 2,
        maxWords: 10,
        overlapWords: 0,
        maxChars: 400,
      });
      expect(chunks).toEqual(['See e.g. the manual for details.', 'Then go on.']);
    });
  });

  describe('overlap', () => {
    it('repeats the last sentences of a chunk at the start of the next, within overlapWords', () => {
      const chunks = chunkText(paragraph(1, 30), SMALL);
      for (let i = 1; i < chunks.length; i++) {
        const first = /^Sentence (\d+)/.exec(chunks[i])![1];
        const repeated = chunks[i].slice(
          0,
          chunks[i].indexOf(sentence(Number(first))) + sentence(Number(first)).length,
        );
        expect(chunks[i - 1]).toContain(repeated);
        // A 5-word sentence fits in 8 overlap words, two do not: exactly one sentence is repeated.
        expect(chunks[i - 1].endsWith(sentence(Number(first)))).toBe(true);
      }
    });

    it('carries nothing over when overlapWords is 0', () => {
      const chunks = chunkText(paragraph(1, 30), { ...SMALL, overlapWords: 0 });
      expect(chunks.join(' ')).toBe(paragraph(1, 30));
    });

    it('does not carry text over into the next section', () => {
      const text = `# One\n\n${paragraph(1, 10)}\n\n# Two\n\n${paragraph(50, 2)}`;
      const chunks = chunkText(text, SMALL);
      const second = chunks.find((chunk) => chunk.startsWith('# Two'));
      expect(second).toBe(`# Two\n\n${paragraph(50, 2)}`);
    });
  });

  describe('headings', () => {
    it('repeats a section heading at the start of each chunk that continues the section', () => {
      const chunks = chunkText(`## Install\n\n${paragraph(1, 30)}`, SMALL);
      expect(chunks.length).toBeGreaterThan(2);
      for (const chunk of chunks) expect(chunk.startsWith('## Install\n\n')).toBe(true);
      expectWithinLimits(chunks, SMALL);
    });

    it('lets small sections share a chunk and starts a new one for a section after a large one', () => {
      const small = chunkText('# A\n\nOne two.\n\n# B\n\nThree four.', SMALL);
      expect(small).toEqual(['# A\n\nOne two.\n\n# B\n\nThree four.']);
      const large = chunkText(`# A\n\n${paragraph(1, 3)}\n\n# B\n\nThree four.`, SMALL);
      expect(large).toEqual([`# A\n\n${paragraph(1, 3)}`, '# B\n\nThree four.']);
    });

    it('recognises a heading line inside a paragraph, but not a hashtag', () => {
      const [chunk] = chunkText('Intro line\n# Real heading\n#hashtag is text.', SMALL);
      expect(chunk).toBe('Intro line\n\n# Real heading\n\n#hashtag is text.');
    });
  });

  describe('unicode', () => {
    it('counts words in any script by white space', () => {
      const text = Array.from({ length: 45 }, (_, i) => `слово${i}`).join(' ');
      const chunks = chunkText(text, { ...SMALL, overlapWords: 0 });
      expect(chunks.map((chunk) => words(chunk).length)).toEqual([30, 15]);
    });

    it('keeps CJK text without spaces within maxChars and loses nothing', () => {
      const text = '知識問答サービス。'.repeat(100);
      const chunks = chunkText(text, SMALL);
      expectWithinLimits(chunks, SMALL);
      expect(chunks.join('')).toBe(text);
    });

    // Windows are cut by UTF-16 code unit, so an emoji (two code units) on a window edge is split into
    // lone surrogates, which PostgreSQL's UTF-8 text stores as U+FFFD: the emoji is lost from both chunks.
    it('never cuts a character in half when cutting text without spaces', () => {
      const text = `a${'😀'.repeat(500)}`;
      const chunks = chunkText(text, SMALL);
      for (const chunk of chunks)
        expect(chunk).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      expect(chunks.join('')).toBe(text);
    });
  });
});

describe('chunk locations', () => {
  const spaced = (text: string) => text.replace(/\s+/g, ' ').trim();

  /** Each chunk is its span with white space normalized, after the heading it repeats, if any. */
  function expectLocated(text: string, options: ChunkingOptions) {
    const chunks = chunkDocument(text, options);
    expect(chunks.map((chunk) => chunk.text)).toEqual(chunkText(text, options));
    for (const chunk of chunks) {
      const span = spaced(text.slice(chunk.start, chunk.end).replace(/\u0000/g, ''));
      const own = spaced(chunk.text);
      if (own !== span) expect(own).toMatch(new RegExp(`^#[^\\n]* ${span.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
      expect(span).not.toBe('');
    }
    return chunks;
  }

  it('locates chunks of sentences, paragraphs and sections, overlaps included', () => {
    const text = `# Title\r\n\r\n${paragraph(0, 12)}  \n${paragraph(12, 6)}\n\n## Part two\n\n${paragraph(20, 30)}`;
    const chunks = expectLocated(text, SMALL);
    expect(chunks.length).toBeGreaterThan(4);
    expect(text.slice(chunks[0].start, chunks[0].end).startsWith('# Title')).toBe(true);
    expect(chunks.at(-1)!.end).toBe(text.length);
  });

  it('counts offsets in UTF-16 code units through accents, emoji and run-on text', () => {
    const emoji = Array.from({ length: 40 }, (_, i) => `Caf\u00e9 ${i} 😀 na\u0308ive 👩‍🔬 ok.`).join(' ');
    const chunks = expectLocated(`${emoji}\u0000 ${'x😀'.repeat(400)} end`, SMALL);
    for (const chunk of chunks) expect(chunk.text.includes('😀') || chunk.text.includes('x')).toBe(true);
  });

  it('keeps the default limits', () => {
    expectLocated(`# A\n\n${paragraph(0, 400)}\n\n# B\n\n${paragraph(400, 10)}`, DEFAULT_CHUNKING);
  });
});
