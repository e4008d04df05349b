// What a chart takes from the page: its colours (the theme's CSS variables) and its text
// size (the body's), read when the theme changes; and the same at print size for exports.
import { useEffect, useState } from "react";

export interface ChartTheme {
  text: string;
  muted: string;
  grid: string;
  background: string;
  warn: string;
  bad: string;
  /// The series colours (Okabe–Ito, distinguishable with the common colour-vision deficiencies).
  series: string[];
  /// Pixels.
  fontSize: number;
  fontFamily: string;
}

const VARS = ["--chart-1", "--chart-2", "--chart-3", "--chart-4", "--chart-5", "--chart-6"];

/// The theme as the page shows it now.
export function readTheme(): ChartTheme {
  const s = getComputedStyle(document.documentElement);
  const body = getComputedStyle(document.body);
  const v = (n: string, fallback: string) => s.getPropertyValue(n).trim() || fallback;
  return {
    text: v("--text", "#1b1f24"),
    muted: v("--muted", "#5f6b7a"),
    grid: v("--border", "#d9dee5"),
    background: v("--panel", "#ffffff"),
    warn: v("--warn", "#8a5a00"),
    bad: v("--bad", "#b3261e"),
    series: VARS.map((n, i) => v(n, ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00"][i]!)),
    fontSize: parseFloat(body.fontSize) || 14,
    fontFamily: body.fontFamily || "sans-serif",
  };
}

/// The light theme at print size, for exported SVG and PNG.
export function printTheme(): ChartTheme {
  return {
    text: "#1b1f24",
    muted: "#4a5563",
    grid: "#d9dee5",
    background: "#ffffff",
    warn: "#8a5a00",
    bad: "#b3261e",
    series: ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00"],
    fontSize: 22,
    fontFamily: readTheme().fontFamily,
  };
}

/// The page's chart theme, read again when the theme setting or the system's scheme changes.
export function useChartTheme(): ChartTheme {
  const [theme, setTheme] = useState<ChartTheme>(readTheme);
  useEffect(() => {
    const again = () => setTheme(readTheme());
    const observer = new MutationObserver(again);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme", "lang"] });
    const media = window.matchMedia("(prefers-color-scheme: dark)");
    media.addEventListener("change", again);
    return () => {
      observer.disconnect();
      media.removeEventListener("change", again);
    };
  }, []);
  return theme;
}

/// The width of the element (and its changes): charts are drawn at the size of their panel.
export function useWidth<T extends HTMLElement>(): [(el: T | null) => void, number] {
  const [el, setEl] = useState<T | null>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    if (!el) return;
    // The observer reports the size once it starts observing, then on every change.
    const ro = new ResizeObserver((entries) => {
      for (const e of entries) setWidth(Math.floor(e.contentRect.width));
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [el]);
  return [setEl, width];
}
