import type { Collection } from '../api/types';

/** Checkboxes, one per collection; `chosen` holds their ids. */
export function CollectionChecklist({
  id,
  legend,
  hint,
  all,
  chosen,
  onChange,
}: {
  id: string;
  legend: string;
  hint: string;
  all: Collection[];
  chosen: string[];
  onChange: (chosen: string[]) => void;
}) {
  return (
    <fieldset class="scope-list collection-list" data-testid={`${id}-collections`}>
      <legend>{legend}</legend>
      <p class="hint" id={`${id}-collections-hint`}>
        {hint}
      </p>
      {all.map((collection) => (
        <label key={collection.id} class="checkbox">
          <input
            type="checkbox"
            name={`${id}-collections`}
            value={collection.id}
            checked={chosen.includes(collection.id)}
            onChange={(event) =>
              onChange(
                event.currentTarget.checked
                  ? all.map((c) => c.id).filter((c) => c === collection.id || chosen.includes(c))
                  : chosen.filter((c) => c !== collection.id),
              )
            }
            aria-describedby={`${id}-collections-hint`}
          />
          <span>{collection.name}</span>
        </label>
      ))}
    </fieldset>
  );
}
