import { collections } from '../api/endpoints';
import type { Collection } from '../api/types';
import { useResource } from './use-resource';

/** The organization's collections (the first 100, `default` first), for pickers. */
export function useCollections() {
  return useResource(async () => (await collections.list(100)).results, []);
}

/** `default` is the collection whose id is the organization's id; the API also takes the word for it. */
export function isDefault(collection: Collection, all: Collection[]): boolean {
  return collection.id === all[0]?.id && collection.name === 'default';
}

/** The names of the given ids, in the given order; an id not (or no longer) listed stays as it is. */
export function collectionNames(ids: string[], all: Collection[] | undefined): string[] {
  return ids.map((id) => all?.find((collection) => collection.id === id)?.name ?? (id === 'default' ? 'default' : id));
}
