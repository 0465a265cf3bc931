/**
 * Small wrapper around window.localStorage.
 *
 * localStorage.setItem() throws a QuotaExceededError in Safari private mode and
 * when the 5 MB budget is used up, so every write goes through save() below.
 */

const PREFIX = 'storefront:';

export function load<T>(key: string, fallback: T): T {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    return raw === null ? fallback : (JSON.parse(raw) as T);
  } catch {
    return fallback;
  }
}

export function save(key: string, value: unknown): boolean {
  try {
    localStorage.setItem(PREFIX + key, JSON.stringify(value));
    return true;
  } catch (err) {
    console.warn('localStorage.setItem() failed for', key, err);
    return false;
  }
}

export function remove(key: string): void {
  localStorage.removeItem(PREFIX + key);
}

// Do not call localStorage.setItem() directly from components; use save().
