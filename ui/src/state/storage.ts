// What the window remembers between runs (the last view, the last partition): a few strings
// in localStorage. Storage may be unavailable; nothing is remembered then.

export function remembered(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function remember(key: string, value: string | null) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    /* storage unavailable: nothing to remember */
  }
}
