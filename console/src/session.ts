// The signed-in key. It lives in sessionStorage only: never in a URL, a cookie or a log, and it
// is gone when the tab closes or the user signs out. The key's own description (name, scopes,
// expiry) comes from GET /get-current-api-key at sign-in and is kept beside it, so every screen
// can tell which actions the key may take without asking again.
import type { ApiKey } from 'workflow-run-client';
import type { Scope } from './vocabulary.js';

const STORAGE_KEY = 'wrs.console.key';
const INFO_KEY = 'wrs.console.keyInfo';

export interface Session {
  key: string;
  info: ApiKey;
}

export function loadSession(): Session | null {
  const key = sessionStorage.getItem(STORAGE_KEY);
  const info = sessionStorage.getItem(INFO_KEY);
  if (!key || !info) return null;
  try {
    return { key, info: JSON.parse(info) as ApiKey };
  } catch {
    return null;
  }
}

export function saveSession(session: Session): void {
  sessionStorage.setItem(STORAGE_KEY, session.key);
  sessionStorage.setItem(INFO_KEY, JSON.stringify(session.info));
}

/** Sign-out: the key and what was known of it are forgotten. */
export function clearSession(): void {
  sessionStorage.removeItem(STORAGE_KEY);
  sessionStorage.removeItem(INFO_KEY);
}

export function holds(session: Session, scope: Scope): boolean {
  return session.info.scopes.includes(scope);
}
