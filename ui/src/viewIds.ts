// The views' ids, in the sidebar's order: what `useNavigate` takes and "hsmc.view"
// remembers. A leaf module, so that state/ can name a view without importing the views
// (nav.tsx pairs each id with its label, shortcut and component, and imports them).
export const VIEW_IDS = [
  "overview",
  "connections",
  "partition",
  "keys",
  "sign",
  "verify",
  "hss",
  "pqc",
  "stats",
  "probes",
  "audit",
  "settings",
] as const;

export type View = (typeof VIEW_IDS)[number];
