import { useEffect, useRef } from 'preact/hooks';
import { route, takePageFocusRequest } from '../router';
import { useStore } from '../lib/store';

/** The page's h1; it takes focus after a page change and names the browser tab. */
export function PageHeading({ title }: { title: string }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const path = useStore(route);
  useEffect(() => {
    document.title = `${title} · Knowledge Query`;
    if (takePageFocusRequest()) heading.current?.focus();
  }, [path, title]);
  return (
    <h1 ref={heading} tabIndex={-1} class="page-heading">
      {title}
    </h1>
  );
}
