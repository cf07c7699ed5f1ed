import type { ComponentChildren } from 'preact';
import { createStore } from './lib/store';

const BASE = import.meta.env.BASE_URL; // "/app/"

function currentPath(): string {
  const path = location.pathname;
  if (!path.startsWith(BASE)) return '';
  const rest = path.slice(BASE.length).replace(/\/+$/, '');
  try {
    return decodeURI(rest);
  } catch {
    return rest;
  }
}

/** The page path below /app/, e.g. "keys" or "ask/<session id>". */
export const route = createStore(currentPath());

let focusRequested = false;

/** Ask the next page heading to take focus, so keyboard and screen-reader users land on the new page. */
export function requestPageFocus(): void {
  focusRequested = true;
}

export function takePageFocusRequest(): boolean {
  const requested = focusRequested;
  focusRequested = false;
  return requested;
}

window.addEventListener('popstate', () => {
  const path = currentPath();
  if (path !== route.get()) {
    requestPageFocus();
    route.set(path);
  }
});

export const hrefFor = (to: string): string => BASE + to;

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', hrefFor(to));
  else history.pushState(null, '', hrefFor(to));
  requestPageFocus();
  route.set(to);
}

interface LinkProps {
  to: string;
  children: ComponentChildren;
  class?: string;
  'aria-current'?: 'page';
}

/** A link that changes page without a reload; modified clicks (new tab, …) behave as usual. */
export function Link({ to, children, ...rest }: LinkProps) {
  return (
    <a
      {...rest}
      href={hrefFor(to)}
      onClick={(event) => {
        if (
          event.defaultPrevented ||
          event.button !== 0 ||
          event.metaKey ||
          event.ctrlKey ||
          event.shiftKey ||
          event.altKey
        )
          return;
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}
