/** Client-side routes under /console/: history.pushState, and the server answers index.html for any of them. */
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** Where the console is served; Vite's `base` without its trailing slash. */
export const BASE = '/console';

const listeners = new Set<() => void>();

/** The route: the path after /console/, without slashes at either end ('' for the start page). */
export function currentRoute(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  return path.replace(/^\/+|\/+$/g, '');
}

/** Goes to a route; `replace` leaves no history entry (a redirect). */
export function navigate(route: string, replace = false): void {
  const url = `${BASE}/${route}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

/** The current route, re-rendering on navigation and on the browser's back and forward. */
export function useRoute(): string {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return route;
}

/** A real link (it opens in a new tab, and copies as a URL) that navigates in place on a plain click. */
export function Link(props: { to: string; current?: boolean; children: ComponentChildren }) {
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    // Following a link to the page already shown re-renders nothing, so the focus goes to its heading here.
    if (currentRoute() === props.to) document.querySelector<HTMLElement>('main h1')?.focus();
    else navigate(props.to);
  };
  return (
    <a href={`${BASE}/${props.to}`} onClick={onClick} aria-current={props.current ? 'page' : undefined}>
      {props.children}
    </a>
  );
}
