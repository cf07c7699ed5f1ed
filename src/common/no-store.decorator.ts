import { Header } from '@nestjs/common';

/** For answers that carry a token or a full key: no browser, proxy or CDN may keep a copy. */
export const NoStore = () => Header('Cache-Control', 'no-store');
