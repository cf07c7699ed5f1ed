import { NotFoundError } from '../common/errors.js';
import { SLUG_PATTERN } from './dto/slug.field.js';

/** A path slug that cannot exist names nothing: the same 404 as a slug that does not exist. */
export function pathSlug(slug: string, kind: 'Domain' | 'Region'): string {
  if (!SLUG_PATTERN.test(slug)) throw NotFoundError.named(kind, slug);
  return slug;
}
