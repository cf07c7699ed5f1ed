import { useState } from 'preact/hooks';
import { type ApiError, asApiError } from '../api/http';

export interface Action {
  busy: boolean;
  error: ApiError | null;
  setError: (error: ApiError | null) => void;
  /**
   * Runs `work` with `busy` set and any failure kept as `error`; resolves whether it succeeded. With
   * `leaving`, `busy` stays set after a success: the form is about to go away (a dialog closes, a
   * page changes), and a second click meanwhile must not submit again.
   */
  run: (work: () => Promise<unknown>, options?: { leaving?: boolean }) => Promise<boolean>;
}

/** The busy flag and error of one form or dialog's action. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  async function run(work: () => Promise<unknown>, { leaving = false } = {}): Promise<boolean> {
    setBusy(true);
    setError(null);
    try {
      await work();
      if (!leaving) setBusy(false);
      return true;
    } catch (caught) {
      setError(asApiError(caught));
      setBusy(false);
      return false;
    }
  }
  return { busy, error, setError, run };
}
