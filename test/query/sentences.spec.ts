import { sentencesOf } from '../../src/query/answerers/sentences.js';

const texts = (text: string) => sentencesOf(text).map((sentence) => sentence.text);

describe('sentencesOf', () => {
  it.each([
    [
      'an abbreviation of a country',
      'He played the Super Bowl in the U.S. during 2015. Then he left.',
      'the U.S. during',
    ],
    ['a decimal number', 'He ran for a 4.7 yards per carry. It was a record.', 'a 4.7 yards per carry.'],
    ['an e-mail address', 'Report it to security@example.com within a day. We answer.', 'security@example.com within'],
    ['e.g. in brackets', 'Controlled substances (e.g. heroin) are banned. Yes.', '(e.g. heroin) are banned.'],
    ['e.g. before a capital', 'Some drugs (e.g. Heroin and LSD) are banned. Yes.', '(e.g. Heroin and LSD) are banned.'],
    ['a middle initial', 'Chief Justice John G. Roberts swore him in. Next.', 'John G. Roberts swore him in.'],
    ['a row of initials', 'J. R. R. Tolkien wrote it in 1937. Next.', 'J. R. R. Tolkien wrote it in 1937.'],
    ['titles', 'Dr. Smith met Sen. Kerry at St. Louis in May. Next.', 'Dr. Smith met Sen. Kerry at St. Louis in May.'],
    [
      'a URL with a query string',
      'See https://example.com/a.b?x=1 for details. Then go.',
      'https://example.com/a.b?x=1 for details.',
    ],
    [
      'a URL ending a sentence',
      'Keys are rotated at www.example.org/keys. Done!',
      'Keys are rotated at www.example.org/keys.',
    ],
    ['a path', 'Rotate it with POST /v1/keys/{id}/rotate/. Then wait.', 'Rotate it with POST /v1/keys/{id}/rotate/.'],
    ['a time', 'Doors open at 5 p.m. on Monday. Bring a ticket.', 'Doors open at 5 p.m. on Monday.'],
  ])('keeps %s inside its sentence', (_, text, piece) => {
    const sentences = texts(text);
    expect(sentences).toHaveLength(2);
    expect(sentences[0]).toContain(piece);
    expect(sentences[0]).toMatch(/[.!?]$/);
  });

  it('still ends sentences at their full stops, question and exclamation marks', () => {
    expect(texts('Penguins eat krill. Do they fly? No! They swim.')).toEqual([
      'Penguins eat krill.',
      'Do they fly?',
      'No!',
      'They swim.',
    ]);
  });

  it('ends a sentence after a capitalised word that is not an initial or a title', () => {
    expect(texts('The award went to the USA. The next one went to Canada.')).toHaveLength(2);
  });

  it('gives each sentence its place in the text', () => {
    const text = '  First one here.   Second one, at 4.5 m.\n';
    for (const sentence of sentencesOf(text)) expect(text.slice(sentence.start, sentence.end)).toBe(sentence.text);
    expect(texts(text)).toEqual(['First one here.', 'Second one, at 4.5 m.']);
  });

  it('keeps the breaks of scripts that need no space after a full stop', () => {
    expect(texts('中文句子。第二句。')).toEqual(['中文句子。', '第二句。']);
  });

  it('makes nothing of blank text', () => {
    expect(texts(' \n ')).toEqual([]);
  });
});
