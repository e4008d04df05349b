// The window's languages: English, 繁體中文 (zh-Hant), 简体中文 (zh-Hans). One i18next
// catalog per language (../../locales/*.json, shared with the backend: nested keys, {{name}} placeholders, plurals as
// key_one/key_other), shared with the backend: its ApiError and Overview texts carry a key
// and arguments from the same files (the English text is the fallback), and `hsmc --lang`
// reads them too. The language follows the system's on first start and is a setting after;
// numbers and dates are formatted for it.
import i18next from "i18next";
import { initReactI18next, useTranslation } from "react-i18next";
import type { ApiError, Finding, Language, Text } from "./bindings";
import en from "../../locales/en.json";
import zhHans from "../../locales/zh-Hans.json";
import zhHant from "../../locales/zh-Hant.json";
import { remember, remembered } from "./state/storage";

/// The languages, each named in itself (the Settings choice).
export const LANGUAGES: readonly { id: Language; name: string }[] = [
  { id: "en", name: "English" },
  { id: "zh-Hant", name: "繁體中文" },
  { id: "zh-Hans", name: "简体中文" },
];

const KEY = "hsmc.language";

/// The system's language: the first of the window's preferred languages we have.
/// zh-TW, zh-HK and zh-MO read Traditional; other Chinese locales Simplified.
export function systemLanguage(preferred: readonly string[] = navigator.languages ?? [navigator.language]): Language {
  for (const tag of preferred) {
    const t = tag.toLowerCase();
    if (t === "zh" || t.startsWith("zh-")) {
      return /hant|-tw|-hk|-mo/.test(t) ? "zh-Hant" : "zh-Hans";
    }
    if (t === "en" || t.startsWith("en-")) return "en";
  }
  return "en";
}

void i18next.use(initReactI18next).init({
  resources: { en: { translation: en }, "zh-Hant": { translation: zhHant }, "zh-Hans": { translation: zhHans } },
  // Until the settings are read: what this window chose last, else the system's.
  lng: (remembered(KEY) as Language | null) ?? systemLanguage(),
  fallbackLng: "en",
  supportedLngs: ["en", "zh-Hant", "zh-Hans"],
  interpolation: { escapeValue: false },
  returnNull: false,
});

declare module "i18next" {
  interface CustomTypeOptions {
    resources: { translation: typeof en };
  }
}

/// Switch the window to `lang` (null: the system's); remembered for the next start.
export function applyLanguage(lang: Language | null) {
  const l = lang ?? systemLanguage();
  remember(KEY, lang);
  document.documentElement.lang = l;
  if (i18next.language !== l) void i18next.changeLanguage(l);
}

export function currentLanguage(): Language {
  return (i18next.language as Language) ?? "en";
}

/// The locale for numbers and dates in a language.
function locale(lang: Language): string {
  if (lang === "zh-Hant") return "zh-TW";
  if (lang === "zh-Hans") return "zh-CN";
  return navigator.language?.toLowerCase().startsWith("en") ? navigator.language : "en-US";
}

/// A catalog entry by a key only known at run time (backend messages), with a fallback.
export function translateKey(key: string, args: Record<string, string | number>, fallback: string): string {
  if (!i18next.exists(key)) return fallback;
  // The key is checked above; the types cannot know it.
  return (i18next.t as (k: string, o: object) => string)(key, { ...args, defaultValue: fallback });
}

/// Arguments with the texts nested in them (console's Text::nest: `name.key` and `name.ARG`)
/// translated, each filling `name`.
function withNested(args: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { ...args };
  for (const [k, key] of Object.entries(args)) {
    const name = k.endsWith(".key") ? k.slice(0, -4) : null;
    if (!name) continue;
    const inner = Object.fromEntries(
      Object.entries(args)
        .filter(([a]) => a !== k && a.startsWith(`${name}.`))
        .map(([a, v]) => [a.slice(name.length + 1), v]),
    );
    // The inner text's own nested texts too (a deeper level has shorter keys, so this ends).
    out[name] = translateKey(key, withNested(inner), args[name] ?? "");
  }
  return out;
}

/// A backend Text (overview items, probe verdicts, file problems) in the window's language.
export function textOf(t: Text): string {
  return translateKey(t.key, withNested(t.args), t.text);
}

/// An audit finding (the verifier's verdict) in the window's language: its fields fill
/// `audit.findings.<kind>`; the backend's English when the catalog lacks it.
export function findingText(f: Finding, english: string): string {
  const { kind, ...fields } = f;
  return translateKey(`audit.findings.${kind}`, fields, english);
}

/// A backend error's message, suggestion and details in the window's language (English when the
/// error carries no key, or the catalog lacks it).
export function errorTexts(e: ApiError): { message: string; suggestion: string | null; details: string | null } {
  const i = e.i18n;
  const args = i ? withNested(i.args) : {};
  return {
    message: i?.message ? translateKey(i.message, args, e.message) : e.message,
    suggestion: e.suggestion && i?.suggestion ? translateKey(i.suggestion, args, e.suggestion) : e.suggestion,
    details: e.details && i?.details ? translateKey(i.details, args, e.details) : e.details,
  };
}

/// Formatting in the window's language: numbers, byte sizes, dates and times.
export function useFormat() {
  const { i18n } = useTranslation();
  const lang = (i18n.language as Language) ?? "en";
  return formatter(lang);
}

export function formatter(lang: Language = currentLanguage()) {
  const loc = locale(lang);
  const num = (n: number | bigint | null | undefined, digits?: number) =>
    n === null || n === undefined
      ? "—"
      : new Intl.NumberFormat(loc, digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(n);
  const when = (iso: string | number | Date, opts: Intl.DateTimeFormatOptions) => {
    const d = iso instanceof Date ? iso : new Date(iso);
    return Number.isNaN(d.getTime()) ? String(iso) : new Intl.DateTimeFormat(loc, opts).format(d);
  };
  return {
    locale: loc,
    number: num,
    /// A latency given in microseconds, in the unit that reads best: "850 µs", "1.2 ms",
    /// "12 ms", "1.5 s" — two significant digits below 10 of a unit, never µs decimals.
    latency: (us: number | null | undefined) => {
      if (us === null || us === undefined) return "—";
      const scaled = (v: number, unit: string) => `${num(v, v < 9.95 ? 1 : 0)} ${unit}`;
      if (us < 999.5) return `${num(Math.round(us), 0)} µs`;
      if (us < 999_500) return scaled(us / 1000, "ms");
      return scaled(us / 1_000_000, "s");
    },
    /// A share as "12.5 %" (the space before % as the console has always written it).
    percent: (n: number | null | undefined, digits = 1) => (n === null || n === undefined ? "—" : `${num(n, digits)} %`),
    dateTime: (iso: string | number | Date) => when(iso, { dateStyle: "medium", timeStyle: "medium" }),
    date: (iso: string | number | Date) => when(iso, { dateStyle: "medium" }),
    time: (iso: string | number | Date) => when(iso, { timeStyle: "medium" }),
    bytes: (n: number | null | undefined) => {
      if (n === null || n === undefined) return "—";
      if (n < 1024) return `${num(n)} B`;
      if (n < 1024 * 1024) return `${num(n / 1024, 1)} KiB`;
      if (n < 1024 * 1024 * 1024) return `${num(n / 1024 / 1024, 1)} MiB`;
      return `${num(n / 1024 / 1024 / 1024, 2)} GiB`;
    },
  };
}

export default i18next;
