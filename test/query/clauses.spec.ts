import { clausesOf, piecesOf } from '../../src/query/answerers/clauses.js';
import { askedKind } from '../../src/query/answerers/answer-kind.js';
import { QuestionWeights } from '../../src/query/answerers/relevance.js';
import { DEFAULT_EXTRACTIVE } from '../../src/query/answerers/extractive.answerer.js';

describe('clausesOf', () => {
  it('splits at commas, semicolons, colons, before a dash and around an aside in parentheses', () => {
    expect(
      clausesOf('Luther was born in Eisleben, Saxony (now Germany) in 1483; he died there — aged 62: of a stroke.'),
    ).toEqual([
      'Luther was born in Eisleben,',
      'Saxony',
      '(now Germany)',
      'in 1483;',
      'he died there',
      '— aged 62:',
      'of a stroke.',
    ]);
  });

  it.each([
    ['a date', 'The game was played on February 7, 2016 at the stadium.'],
    ['a number with separators', 'It seats 68,500 people in 3.5 hours.'],
    [
      'an abbreviation, an e-mail address and a URL',
      'Write to security@example.com or see https://example.com/a,b;c:d in the U.S. now.',
    ],
    ['a time', 'Doors open at 10:30 every day.'],
  ])('never splits inside %s', (_, sentence) => {
    expect(clausesOf(sentence)).toEqual([sentence]);
  });

  it('joined back with spaces, the clauses are the sentence', () => {
    const sentence = 'Oxygen, discovered by Scheele (a Swede), is reactive; it forms oxides — with most elements.';
    expect(clausesOf(sentence).join(' ')).toBe(sentence);
  });
});

describe('piecesOf', () => {
  const pieces = (sentence: string, question: string) =>
    piecesOf(sentence, question, new QuestionWeights(question), askedKind(question), DEFAULT_EXTRACTIVE.clauses);

  it('offers every contiguous run of clauses, without its closing comma, each with its chance', () => {
    const sentence = 'The game was played on February 7, 2016, at Levi’s Stadium in the San Francisco Bay Area.';
    const offered = pieces(sentence, 'When was the game played?');
    expect(offered.map((piece) => piece.text)).toEqual([
      'The game was played on February 7, 2016',
      sentence,
      'at Levi’s Stadium in the San Francisco Bay Area.',
    ]);
    // The clause with the date and the question's words is the likelier to answer "when".
    expect(offered[0].chance).toBeGreaterThan(0.5);
    expect(offered[1].chance).toBe(1);
    expect(offered[0].chance + offered[2].chance).toBeCloseTo(1);
  });

  it('offers a sentence of one clause whole, and no run that leaves a parenthesis open', () => {
    expect(pieces('It was televised by CBS during prime time.', 'Who televised it?')).toEqual([
      { text: 'It was televised by CBS during prime time.', words: 8, chance: 1 },
    ]);
    const sentence = 'Tesla was born (on 10 July, in the village of Smiljan, during a storm) to Serbian parents.';
    for (const { text } of pieces(sentence, 'Where was Tesla born?')) {
      expect(sentence).toContain(text);
      expect(text.split('(').length).toBe(text.split(')').length);
    }
  });

  it('drops the conjunction or dash that opens a run past the sentence start', () => {
    const sentence = 'The Broncos lost twice, and the Panthers became one of only six teams with a 15–1 record.';
    const texts = pieces(sentence, 'How many teams have had a 15-1 record?').map((piece) => piece.text);
    expect(texts).toContain('the Panthers became one of only six teams with a 15–1 record.');
    expect(texts.some((text) => /^and\b/.test(text))).toBe(false);
  });
});
