// The remembered settings as the backend last returned them (loaded at start, replaced after
// a save), and the theme and language they choose for the window.
import { useEffect, useMemo, useState, type ReactNode } from "react";
import type { Settings } from "../bindings";
import { applyLanguage } from "../i18n";
import { createSlice } from "./context";

const [SettingsContext, useSettings] = createSlice<{ settings: Settings | null; setSettings: (s: Settings) => void }>("useSettings");
export { useSettings };

export function SettingsProvider({ children }: { children: ReactNode }) {
  const [settings, setSettings] = useState<Settings | null>(null);
  const theme = settings?.theme ?? "system";
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  // Until the settings are read, the language this window used last (or the system's).
  const language = settings ? settings.language : undefined;
  useEffect(() => {
    if (language !== undefined) applyLanguage(language);
  }, [language]);
  const value = useMemo(() => ({ settings, setSettings }), [settings]);
  return <SettingsContext value={value}>{children}</SettingsContext>;
}
