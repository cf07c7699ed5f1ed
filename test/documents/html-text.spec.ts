import { htmlToText } from '../../src/documents/extraction/html-text.js';

describe('htmlToText: page furniture', () => {
  it("drops navigation, menus, sidebars and the page's banner and footer, keeps an article's own header", () => {
    const html =
      '<html><head><title>Policies</title></head><body>' +
      '<header><a href="/">Home</a> | <a>Policies</a> | <a>Contact</a></header>' +
      '<nav><ul><li><a>Home</a></li><li><a>Policies</a></li></ul></nav>' +
      '<div class="breadcrumb">Docs › Policies</div><div id="sidebar">Popular pages</div>' +
      '<main><article><header><h1>Expense policy</h1><p>By Finance</p></header>' +
      '<p>Meals are reimbursed up to 50 EUR a day.</p><aside>Related: travel</aside>' +
      '<menu><li>Print</li></menu><footer>Updated 2024</footer></article></main>' +
      '<div role="contentinfo">© Corp</div><div role="navigation">Next page</div>' +
      '<footer><p>Home | Policies | Contact</p></footer><img src="x"><br><p>After the footer.</p></body></html>';
    expect(htmlToText(html)).toEqual({
      text: '# Expense policy\n\nBy Finance\n\nMeals are reimbursed up to 50 EUR a day.\n\nUpdated 2024\n\nAfter the footer.',
      title: 'Policies',
    });
  });

  it('keeps text whose classes only look like furniture', () => {
    const html = '<div class="menu"><p class="menu-item-price">Soup costs 4 EUR.</p></div><p class="navy">Blue.</p>';
    expect(htmlToText(html).text).toBe('Soup costs 4 EUR.\n\nBlue.');
  });

  it('keeps the nesting limit counting furniture it skips', () => {
    expect(() => htmlToText(`<nav>${'<div>'.repeat(600)}</nav>`)).toThrow(/more than 512 deep/);
  });
});
