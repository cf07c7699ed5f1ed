import { clausesOf, piecesOf } from '../../src/query/answerers/clauses.js';
import { askedKind } from '../../src/query/answerers/answer-kind.js';
import { QuestionWeights, wordsOf } from '../../src/query/answerers/relevance.js';
import { DEFAULT_EXTRACTIVE, ExtractiveAnswerer } from '../../src/query/answerers/extractive.answerer.js';
import type { RetrievedSource } from '../../src/retrieval/retriever.js';

describe('clausesOf', () => {
  it('splits at commas, semicolons, colons, before a dash and around an aside in parentheses', () => {
    expect(
      clausesOf('Luther was born in Eisleben, Saxony (now Germany) in 1483; he died there — aged 62: of a stroke.'),
    ).toEqual([
      'Luther was born',
      'in Eisleben,',
      'Saxony',
      '(now Germany)',
      'in 1483;',
      'he died there',
      '— aged 62:',
      'of a stroke.',
    ]);
  });

  it('splits before a relative pronoun, a subordinating conjunction or a preposition, in lower case only', () => {
    expect(clausesOf('Kubiak, who played for Denver, won in 2016 by beating Carolina With a late drive.')).toEqual([
      'Kubiak,',
      'who played',
      'for Denver,',
      'won',
      'in 2016',
      'by beating Carolina With a late drive.',
    ]);
  });

  it.each([
    ['a date', 'The game was played on February 7, 2016 at the stadium.', 'on February 7, 2016'],
    ['a number with separators', 'It seats 68,500 people in 3.5 hours.', 'It seats 68,500 people'],
    ['a decimal number', 'It seats 68,500 people in 3.5 hours.', 'in 3.5 hours.'],
    [
      'an e-mail address',
      'Write to security@example.com or see https://example.com/a,b;c:d in the U.S. now.',
      'Write to security@example.com or see https://example.com/a,b;c:d',
    ],
    ['an abbreviation', 'Troops left the U.S. in 1990 for good.', 'Troops left the U.S.'],
    [
      'a URL holding an opener',
      'See https://example.com/a,b;c:d?in=at for details.',
      'See https://example.com/a,b;c:d?in=at',
    ],
    ['a time', 'Doors open at 10:30 every day.', 'at 10:30 every day.'],
  ])('never splits inside %s', (_, sentence, clause) => {
    expect(clausesOf(sentence)).toContain(clause);
    expect(clausesOf(sentence).join(' ')).toBe(sentence);
  });

  it('joined back with spaces, the clauses are the sentence', () => {
    const sentence = 'Oxygen, discovered by Scheele (a Swede), is reactive; it forms oxides — with most elements.';
    expect(clausesOf(sentence).join(' ')).toBe(sentence);
  });
});

describe('piecesOf', () => {
  const pieces = (sentence: string, question: string, maxWords?: number) =>
    piecesOf(
      sentence,
      question,
      new QuestionWeights(question),
      askedKind(question),
      DEFAULT_EXTRACTIVE.clauses,
      maxWords,
    );
  /** The piece holding the most chance per word (as the answer weighs a piece: short and likely). */
  const likeliest = (sentence: string, question: string) =>
    pieces(sentence, question)
      .filter((piece) => piece.chance > 0.5)
      .sort((a, b) => a.words - b.words)[0].text;

  it('offers every contiguous run of clauses, without its closing comma, each with its chance', () => {
    const sentence = 'The game was played on February 7, 2016, at Levi’s Stadium in the San Francisco Bay Area.';
    const offered = pieces(sentence, 'When was the game played?');
    const texts = offered.map((piece) => piece.text);
    expect(texts).toEqual([
      'The game was played',
      'The game was played on February 7, 2016',
      'The game was played on February 7, 2016, at Levi’s Stadium',
      sentence,
      'on February 7, 2016',
      'on February 7, 2016, at Levi’s Stadium',
      'on February 7, 2016, at Levi’s Stadium in the San Francisco Bay Area.',
      'at Levi’s Stadium',
      'at Levi’s Stadium in the San Francisco Bay Area.',
      'in the San Francisco Bay Area.',
    ]);
    // The phrase with the date, after the clause with the question's words, is the likeliest to answer "when".
    const chanceOf = (text: string) => offered[texts.indexOf(text)].chance;
    expect(chanceOf('on February 7, 2016')).toBeGreaterThan(0.9);
    expect(chanceOf(sentence)).toBe(1);
    const alone = ['The game was played', 'on February 7, 2016', 'at Levi’s Stadium', 'in the San Francisco Bay Area.'];
    expect(alone.reduce((sum, text) => sum + chanceOf(text), 0)).toBeCloseTo(1);
  });

  it.each([
    [
      'who did it, the phrase naming the doer',
      'It was televised by CBS during prime time.',
      'Who televised it?',
      'by CBS',
    ],
    [
      '"in what year", the phrase with that preposition and a year',
      'The Office of Western Medicine was founded by Jesuit doctors in 1263 at the imperial court.',
      'In what year was the Office of Western Medicine founded?',
      'in 1263',
    ],
    [
      'who did it, the clause with a new name, not the phrase setting the scene',
      'After the miss, Manning completed a pair of passes to Emmanuel Sanders for gains of 25 and 22 yards.',
      'Who caught two passes from Manning after the miss?',
      'Manning completed a pair of passes to Emmanuel Sanders',
    ],
  ])('for %s, the shortest likely piece is the one holding the answer', (_, sentence, question, answer) => {
    expect(likeliest(sentence, question)).toBe(answer);
  });

  it('offers a sentence of one clause whole, and no run that leaves a parenthesis or a quotation open', () => {
    expect(pieces('Tesla was a Serbian-American inventor.', 'Who was Tesla?')).toEqual([
      { text: 'Tesla was a Serbian-American inventor.', words: 6, chance: 1 },
    ]);
    const sentence = 'Tesla was born (on 10 July, in the village of Smiljan, during a storm) to Serbian parents.';
    for (const { text } of pieces(sentence, 'Where was Tesla born?')) {
      expect(sentence).toContain(text);
      expect(text.split('(').length).toBe(text.split(')').length);
    }
    const quoted = 'The league promoted the “Golden Super Bowl” in every city, and the "Super Bowl L" logo in none.';
    const texts = pieces(quoted, 'What did the league promote?').map((piece) => piece.text);
    expect(texts).toContain('The league promoted the “Golden Super Bowl”');
    for (const text of texts) {
      expect(text.split('“').length).toBe(text.split('”').length);
      expect(text.split('"').length % 2).toBe(1);
    }
  });

  it('counts the words of each piece as the answer will quote them', () => {
    const sentence = 'The Broncos lost twice, and the Panthers became one of only six teams with a 15–1 record.';
    for (const piece of pieces(sentence, 'How many teams have had a 15-1 record?')) {
      expect(piece.words).toBe(wordsOf(piece.text).length);
    }
  });

  it('offers no run longer than the answer may be, but always the whole sentence', () => {
    const sentence = 'The Broncos lost twice, and the Panthers became one of only six teams with a 15–1 record.';
    const offered = pieces(sentence, 'How many teams have had a 15-1 record?', 6);
    expect(offered.map((piece) => piece.text)).toContain(sentence);
    expect(offered.filter((piece) => piece.text !== sentence).every((piece) => piece.words <= 6)).toBe(true);
  });

  it('drops the conjunction or dash that opens a run past the sentence start', () => {
    const sentence = 'The Broncos lost twice, and the Panthers became one of only six teams with a 15–1 record.';
    const texts = pieces(sentence, 'How many teams have had a 15-1 record?').map((piece) => piece.text);
    expect(texts).toContain('the Panthers became one of only six teams with a 15–1 record.');
    expect(texts.some((text) => /^and\b/.test(text))).toBe(false);
  });
});

describe('the extractive answer: one short piece when sure of it, a second when not', () => {
  const answer = async (question: string, ...passages: string[]) => {
    let text = '';
    const sources = passages.map((content) => ({ content }) as RetrievedSource);
    for await (const delta of new ExtractiveAnswerer().answer({ question, passages: sources })) text += delta;
    return text;
  };
  const game =
    'The Broncos beat the Panthers in the game. Denver won its third title in the game, and the Panthers lost ' +
    'their second. The halftime show of the game was headlined by Coldplay.';

  it('quotes only the clause that answers when one sentence clearly does', async () => {
    expect(await answer('Who lost the game?', game)).toBe('the Panthers lost their second. [1]');
  });

  it('adds a piece of the runner-up sentence when the best one may not answer', async () => {
    expect(await answer('What happened in the game?', game)).toBe(
      'The Broncos beat the Panthers [1] the Panthers lost their second. [1]',
    );
  });
});
