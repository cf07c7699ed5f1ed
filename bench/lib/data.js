import { readFileSync } from 'node:fs';

/** The records of a JSON Lines file (blank lines skipped): the SciFact and SQuAD sets are stored so. */
export function readJsonLines(path) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line));
}

/** Runs `work` over `items` with at most `concurrency` in flight; results in input order. */
export async function pool(items, concurrency, work) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
