import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, asApiError } from '../api/http';

export interface Resource<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Loads data for a component; a later load wins over an earlier one still in flight. */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const latest = useRef(0);
  const loader = useRef(load);
  loader.current = load;

  const reload = useCallback(async () => {
    const ticket = ++latest.current;
    setLoading(true);
    try {
      const value = await loader.current();
      if (ticket !== latest.current) return;
      setData(value);
      setError(null);
    } catch (caught) {
      if (ticket === latest.current) setError(asApiError(caught));
    } finally {
      if (ticket === latest.current) setLoading(false);
    }
  }, []);

  useEffect(() => {
    void reload();
    return () => {
      latest.current += 1; // ignore answers for an unmounted or outdated view
    };
  }, deps);

  return { data, error, loading, reload };
}
