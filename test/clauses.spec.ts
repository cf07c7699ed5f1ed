import { clausesOf, coreOf } from '../src/query/answerers/clauses.js';
import { askedKind } from '../src/query/answerers/answer-kind.js';
import { QuestionWeights } from '../src/query/answerers/relevance.js';
import { DEFAULT_EXTRACTIVE } from '../src/query/answerers/extractive.answerer.js';

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

describe('coreOf', () => {
  const core = (sentence: string, question: string) =>
    coreOf(
      sentence,
      question,
      new QuestionWeights(question),
      askedKind(question),
      DEFAULT_EXTRACTIVE.clauses,
      DEFAULT_EXTRACTIVE.coreMass,
    );

  it('keeps the clauses that answer, a contiguous piece of the sentence without its closing comma', () => {
    const sentence = 'The game was played on February 7, 2016, at Levi’s Stadium in the San Francisco Bay Area.';
    expect(core(sentence, 'When was the game played?')).toBe('The game was played on February 7, 2016');
  });

  it('keeps a whole sentence of one clause, and never leaves a parenthesis open', () => {
    expect(core('It was televised by CBS during prime time.', 'Who televised it?')).toBe(
      'It was televised by CBS during prime time.',
    );
    const sentence = 'Tesla was born (on 10 July, in the village of Smiljan, during a storm) to Serbian parents.';
    const kept = core(sentence, 'Where was Tesla born?');
    expect(sentence).toContain(kept);
    expect(kept.split('(').length).toBe(kept.split(')').length);
  });
});
