// Charts in a panel: drawn at the panel's width with the page's colours and text size, the
// values under the pointer shown beside it, and exports (SVG, PNG) of the same chart at
// print size. Bars can be clicked (the Audit view filters its table to the day).
import { useState, type MouseEvent } from "react";
import { useTranslation } from "react-i18next";
import { api, toApiError } from "../ipc";
import { useToast } from "../state";
import { barGeometry, BarSvg, lineGeometry, LineSvg, type BarSpec, type LineSpec } from "./svg";
import { printTheme, useChartTheme, useWidth } from "./theme";

export type { BarSpec, LineSpec, Series, Threshold, Axis } from "./svg";

/// Print size of an export (pixels; the text is 22 px).
const PRINT = { width: 1600, height: 800 };

/// The chart as a standalone SVG document (the renderer is loaded on the first export only).
async function svgMarkup(el: React.ReactElement): Promise<string> {
  const { renderToStaticMarkup } = await import("react-dom/server");
  return `<?xml version="1.0" encoding="UTF-8"?>\n${renderToStaticMarkup(el)}`;
}

async function pngBase64(svg: string, width: number, height: number): Promise<string> {
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
  await img.decode();
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext("2d");
  if (!ctx) throw new Error("no canvas");
  ctx.drawImage(img, 0, 0, width, height);
  return canvas.toDataURL("image/png").split(",")[1] ?? "";
}

/// "SVG…" and "PNG…": the chart at print size, saved where the officer chooses.
function ExportButtons({ name, render }: { name: string; render: () => React.ReactElement }) {
  const { t } = useTranslation();
  const toast = useToast();
  const save = async (kind: "svg" | "png") => {
    try {
      const svg = await svgMarkup(render());
      const p =
        kind === "svg"
          ? await api.saveExport(`${name}.svg`, "svg", { text: svg })
          : await api.saveExport(`${name}.png`, "png", { base64: await pngBase64(svg, PRINT.width, PRINT.height) });
      if (p) toast("ok", t("common.saved", { path: p }));
    } catch (e) {
      toast("error", t("common.export_failed"), toApiError(e));
    }
  };
  return (
    <div className="button-row chart-exports">
      <button onClick={() => void save("svg")}>{t("charts.export_svg")}</button>
      <button onClick={() => void save("png")}>{t("charts.export_png")}</button>
    </div>
  );
}

interface Hover {
  left: number;
  top: number;
  lines: string[];
}

function Tooltip({ hover, testId }: { hover: Hover | null; testId: string }) {
  if (!hover) return null;
  return (
    <div className="chart-tooltip" style={{ left: hover.left, top: hover.top }} data-testid={`${testId}-tooltip`} role="status">
      {hover.lines.map((l, i) => (
        <div key={i} className={i === 0 ? "chart-tooltip-head" : undefined}>
          {l}
        </div>
      ))}
    </div>
  );
}

/// A line chart the width of its panel; `height` in lines of body text (default 20).
export function LineChart({
  spec,
  testId,
  exportName,
  lines = 20,
}: {
  spec: LineSpec;
  testId: string;
  exportName?: string;
  lines?: number;
}) {
  const theme = useChartTheme();
  const [ref, width] = useWidth<HTMLDivElement>();
  const [hover, setHover] = useState<(Hover & { x: number }) | null>(null);
  const height = Math.round(theme.fontSize * lines);
  const w = Math.max(width, theme.fontSize * 20);
  const onMove = (e: MouseEvent<HTMLDivElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const px = e.clientX - box.left;
    const g = lineGeometry(spec, w, height, theme);
    if (px < g.l.left || px > g.l.right) return setHover(null);
    const dataX = g.xr.lo + ((px - g.l.left) / (g.l.right - g.l.left)) * (g.xr.hi - g.xr.lo);
    let best: number | null = null;
    for (const s of spec.series) for (const [x] of s.points) if (best === null || Math.abs(x - dataX) < Math.abs(best - dataX)) best = x;
    if (best === null) return setHover(null);
    const at = best;
    const unit = spec.y.unit ? ` ${spec.y.unit}` : "";
    const values = spec.series.flatMap((s) => {
      const p = s.points.find(([x]) => x === at);
      return p ? [`${s.name}: ${spec.y.format(p[1])}${unit}`] : [];
    });
    const head = `${spec.x.label}: ${spec.x.format(at)}${spec.x.unit && !spec.x.time ? ` ${spec.x.unit}` : ""}`;
    setHover({ x: at, left: Math.min(g.x(at) + 12, w - theme.fontSize * 14), top: g.l.top, lines: [head, ...values] });
  };
  return (
    <div className="chart-panel" data-testid={testId}>
      <div className="chart-area" ref={ref} onMouseMove={onMove} onMouseLeave={() => setHover(null)}>
        {width > 0 && <LineSvg spec={spec} width={w} height={height} theme={theme} hoverX={hover?.x ?? null} />}
        <Tooltip hover={hover} testId={testId} />
      </div>
      {exportName && (
        <ExportButtons
          name={exportName}
          render={() => <LineSvg spec={spec} width={PRINT.width} height={PRINT.height} theme={printTheme()} />}
        />
      )}
    </div>
  );
}

/// A bar chart the width of its panel; a click on a bar calls `onSelect` with its index.
export function BarChart({
  spec,
  testId,
  exportName,
  lines = 12,
  selected,
  onSelect,
}: {
  spec: BarSpec;
  testId: string;
  exportName?: string;
  lines?: number;
  selected?: number | null;
  onSelect?: (i: number | null) => void;
}) {
  const theme = useChartTheme();
  const [ref, width] = useWidth<HTMLDivElement>();
  const [hover, setHover] = useState<(Hover & { i: number }) | null>(null);
  const height = Math.round(theme.fontSize * lines);
  const w = Math.max(width, theme.fontSize * 20);
  const indexAt = (e: MouseEvent<HTMLDivElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    const g = barGeometry(spec, w, height, theme);
    const i = Math.floor((e.clientX - box.left - g.l.left) / g.slot);
    return { i: i >= 0 && i < spec.bars.length ? i : null, g };
  };
  const onMove = (e: MouseEvent<HTMLDivElement>) => {
    const { i, g } = indexAt(e);
    if (i === null) return setHover(null);
    const b = spec.bars[i]!;
    setHover({
      i,
      left: Math.min(g.l.left + (i + 1) * g.slot + 8, w - theme.fontSize * 12),
      top: g.l.top,
      lines: [b.label, ...spec.names.map((n, k) => `${n}: ${spec.y.format(b.values[k] ?? 0)}`)],
    });
  };
  return (
    <div className="chart-panel" data-testid={testId}>
      <div
        className={`chart-area${onSelect ? " chart-clickable" : ""}`}
        ref={ref}
        onMouseMove={onMove}
        onMouseLeave={() => setHover(null)}
        onClick={(e) => {
          if (!onSelect) return;
          const { i } = indexAt(e);
          if (i !== null) onSelect(i === selected ? null : i);
        }}
      >
        {width > 0 && <BarSvg spec={spec} width={w} height={height} theme={theme} selected={selected ?? null} hover={hover?.i ?? null} />}
        <Tooltip hover={hover} testId={testId} />
      </div>
      {exportName && (
        <ExportButtons
          name={exportName}
          render={() => <BarSvg spec={spec} width={PRINT.width} height={PRINT.height} theme={printTheme()} />}
        />
      )}
    </div>
  );
}
