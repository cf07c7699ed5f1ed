import { NotFoundError } from '../common/errors.js';
import { SLUG_PATTERN } from './dto/slug.field.js';

/** A path slug that cannot exist names nothing. */
export function pathSlug(slug: string): string {
  if (!SLUG_PATTERN.test(slug)) throw new NotFoundError();
  return slug;
}
