import { readableBlocks } from '../../src/query/answerers/readable-passage.js';

describe('readableBlocks', () => {
  it('takes out Markdown markers: headings, emphasis, bullets, links, images, code ticks and quotes', () => {
    const passage = [
      '# Expense policy',
      '',
      'Meals are **reimbursed** up to _50 EUR_ a day; see the [travel rules](https://example.com/travel "Travel").',
      '',
      '## Access Request',
      '',
      '- Ask your *manager* first.',
      '* Then file a ticket with `access-request`.',
      '1. Wait for ![a green tick](tick.png) approval.',
      '> Quoted advice stays, without its marker.',
    ].join('\n');
    expect(readableBlocks(passage)).toEqual([
      'Meals are reimbursed up to 50 EUR a day; see the travel rules.',
      'Ask your manager first.',
      'Then file a ticket with access-request.',
      'Wait for a green tick approval.',
      'Quoted advice stays, without its marker.',
    ]);
  });

  it('drops rows of navigation links, keeps prose that happens to hold a bar', () => {
    expect(readableBlocks('Home | Policies | Contact\n\nDocs › API › Keys\n\nUse a | b for either.')).toEqual([
      'Use a | b for either.',
    ]);
  });

  it('joins the lines of a paragraph, keeps list items and table rows apart, drops code and table rules', () => {
    const passage =
      'A sentence that\nwraps onto two lines.\n\n| Item | Limit |\n|---|---|\n| Meals | 50 EUR a day |\n\n```\nrm -rf /\n```';
    expect(readableBlocks(passage)).toEqual([
      'A sentence that wraps onto two lines.',
      'Item; Limit',
      'Meals; 50 EUR a day',
    ]);
  });

  it('leaves words with underscores and asterisks inside them alone', () => {
    expect(readableBlocks('Set snake_case_name to 2*3*4 units.')).toEqual(['Set snake_case_name to 2*3*4 units.']);
  });
});
