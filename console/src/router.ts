// The console's routes are real URLs under <BASE_PATH>/console (the service answers the same
// page for each), and a screen's filters live in the URL's query: a view can be bookmarked,
// shared and reloaded. Navigation uses the History API; links are ordinary <a href>s.
import { useEffect, useState } from 'preact/hooks';
import { BASE_PATH } from './api.js';

export const CONSOLE_ROOT = `${BASE_PATH}/console`;

export interface Location {
  /** The path below the console's root: '/', '/runs/abc', '/templates'. */
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  let path = location.pathname.startsWith(CONSOLE_ROOT)
    ? location.pathname.slice(CONSOLE_ROOT.length)
    : '/';
  if (path === '') path = '/';
  return { path, query: new URLSearchParams(location.search) };
}

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((listener) => listener()));

/** The href of a console path, with an optional query. */
export function href(path: string, query?: URLSearchParams | Record<string, string>): string {
  const params = query instanceof URLSearchParams ? query : new URLSearchParams(query);
  const text = params.toString();
  return `${CONSOLE_ROOT}${path === '/' ? '' : path}${text ? `?${text}` : ''}`;
}

/** Goes to a console path; `replace` rewrites the current entry (a filter typed in place). */
export function navigate(
  path: string,
  query?: URLSearchParams | Record<string, string>,
  replace = false,
): void {
  const url = href(path, query);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  listeners.forEach((listener) => listener());
  if (!replace) window.scrollTo(0, 0);
}

/** The current location; re-renders on every navigation. */
export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const listener = () => setLocation(current());
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return location;
}

/**
 * Lets ordinary <a href> clicks inside the console navigate without a reload (a click with a
 * modifier key, or to another page, is left to the browser).
 */
export function interceptLinks(root: HTMLElement): void {
  root.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const anchor = (event.target as Element).closest('a');
    if (!anchor || anchor.target || anchor.hasAttribute('download')) return;
    const url = new URL(anchor.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith(CONSOLE_ROOT)) return;
    // A link within the page (the skip link's #main) is the browser's to follow: it moves focus.
    if (url.hash && url.pathname === location.pathname && url.search === location.search) return;
    event.preventDefault();
    const path = url.pathname.slice(CONSOLE_ROOT.length) || '/';
    navigate(path, url.searchParams);
  });
}
