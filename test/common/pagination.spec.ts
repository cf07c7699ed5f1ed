import { toPage } from '../../src/common/pagination.js';

const request = (path: string, limit: number, offset: number) => ({
  limit,
  offset,
  url: new URL(path, 'http://placeholder.invalid'),
});

describe('toPage (DRF-style page bodies)', () => {
  it('links to the next and previous pages by path and query only', () => {
    const page = toPage(request('/v1/documents/?limit=10&offset=10', 10, 10), 35, ['x']);
    expect(page).toEqual({
      count: 35,
      next: '/v1/documents/?limit=10&offset=20',
      previous: '/v1/documents/?limit=10&offset=0',
      results: ['x'],
    });
  });

  it('has no previous link on the first page and no next link on the last', () => {
    expect(toPage(request('/v1/documents/', 10, 0), 35, []).previous).toBeNull();
    expect(toPage(request('/v1/documents/', 10, 30), 35, []).next).toBeNull();
    expect(toPage(request('/v1/documents/', 10, 25), 35, []).next).toBeNull(); // 25 + 10 reaches the count
    expect(toPage(request('/v1/documents/', 10, 24), 35, []).next).toBe('/v1/documents/?limit=10&offset=34');
  });

  it('has neither link when everything fits on one page, and for an empty list', () => {
    expect(toPage(request('/v1/domains/', 20, 0), 20, [])).toMatchObject({ next: null, previous: null });
    expect(toPage(request('/v1/domains/', 20, 0), 0, [])).toMatchObject({ count: 0, next: null, previous: null });
  });

  it('clamps the previous offset at 0 for an offset that is not a multiple of the limit', () => {
    expect(toPage(request('/v1/documents/', 10, 4), 35, []).previous).toBe('/v1/documents/?limit=10&offset=0');
  });

  it('links back from past the end to the page before the end of the request window', () => {
    const page = toPage(request('/v1/documents/?offset=100', 10, 100), 35, []);
    expect(page.next).toBeNull();
    expect(page.previous).toBe('/v1/documents/?offset=90&limit=10');
  });

  it('keeps the other query parameters and writes the limit even when the client left it out', () => {
    const page = toPage(request('/v1/domains/r1/documents/?status=ready&q=a%20b', 20, 0), 50, []);
    expect(page.next).toBe('/v1/domains/r1/documents/?status=ready&q=a+b&limit=20&offset=20');
  });
});
