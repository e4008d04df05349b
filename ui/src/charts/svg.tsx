// The charts as SVG, drawn from data at a given size and theme: the same drawing in a
// panel (sized to it, the page's colours and text size) and in an export (print size, the
// light theme). No hooks here, so an export can render it to markup.
import type { ReactNode } from "react";
import { linear, niceTicks, range, timeTicks, type Range } from "./scale";
import type { ChartTheme } from "./theme";

export interface Series {
  name: string;
  points: [number, number][];
  /// A projection or estimate rather than a measurement.
  dashed?: boolean;
  /// Index into the theme's series colours (default: the series' position).
  color?: number;
}

export interface Threshold {
  label: string;
  y: number;
  tone: "warn" | "bad";
}

export interface Axis {
  label: string;
  /// Shown with the label: "time (s)", "latency (µs)".
  unit?: string;
  /// Tick text for a value.
  format: (v: number) => string;
  /// Milliseconds since the epoch (date ticks) rather than plain numbers.
  time?: boolean;
}

export interface LineSpec {
  title: string;
  x: Axis;
  y: Axis;
  series: Series[];
  thresholds?: Threshold[];
  /// Start the y axis at 0 (counts, rates).
  yZero?: boolean;
}

/// An estimate of the width of `text` at `fs` pixels (CJK characters are about square).
export function textWidth(text: string, fs: number): number {
  let w = 0;
  for (const ch of text) w += (ch.codePointAt(0) ?? 0) > 0x2e80 ? fs : fs * 0.6;
  return w;
}

function axisTitle(a: Axis) {
  return a.unit ? `${a.label} (${a.unit})` : a.label;
}

export interface Layout {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
  legendRows: { x: number; y: number; name: string; i: number; dashed: boolean }[];
}

/// Where the plot goes: below the title and legend (which never cover data), right of the
/// y ticks and label, above the x ticks and label.
export function layout(
  names: { name: string; dashed: boolean }[],
  yTickTexts: string[],
  width: number,
  height: number,
  t: ChartTheme,
): Layout {
  const fs = t.fontSize;
  const legendRows: Layout["legendRows"] = [];
  let x = fs * 0.5;
  let y = fs * 2.9;
  names.forEach((n, i) => {
    const w = fs * 2.2 + textWidth(n.name, fs) + fs;
    if (x + w > width && x > fs) {
      x = fs * 0.5;
      y += fs * 1.5;
    }
    legendRows.push({ x, y, name: n.name, i, dashed: n.dashed });
    x += w;
  });
  const top = (names.length ? y : fs * 1.8) + fs * 1.2;
  const left = fs * 2.2 + Math.max(fs * 2, ...yTickTexts.map((s) => textWidth(s, fs))) + fs * 0.6;
  return { width, height, left, right: width - fs, top, bottom: height - fs * 3.4, legendRows };
}

function Legend({ l, t, colorOf }: { l: Layout; t: ChartTheme; colorOf: (i: number) => string }) {
  const fs = t.fontSize;
  return (
    <g className="chart-legend">
      {l.legendRows.map((r) => (
        <g key={r.name}>
          <line
            x1={r.x}
            x2={r.x + fs * 1.6}
            y1={r.y - fs * 0.35}
            y2={r.y - fs * 0.35}
            stroke={colorOf(r.i)}
            strokeWidth={3}
            strokeDasharray={r.dashed ? "6 4" : undefined}
          />
          <text x={r.x + fs * 2} y={r.y} fill={t.text} fontSize={fs}>
            {r.name}
          </text>
        </g>
      ))}
    </g>
  );
}

export function Frame({
  title,
  l,
  t,
  xTicks,
  yTicks,
  x,
  y,
  xAxis,
  yAxis,
  children,
}: {
  title: string;
  l: Layout;
  t: ChartTheme;
  xTicks: { v: number; text: string }[];
  yTicks: { v: number; text: string }[];
  x: (v: number) => number;
  y: (v: number) => number;
  xAxis: Axis;
  yAxis: Axis;
  children: ReactNode;
}) {
  const fs = t.fontSize;
  return (
    <>
      <rect x={0} y={0} width={l.width} height={l.height} fill={t.background} />
      <text x={fs * 0.5} y={fs * 1.4} fill={t.text} fontSize={fs * 1.1} fontWeight="bold" className="chart-title">
        {title}
      </text>
      {yTicks.map((k) => (
        <g key={`y${k.v}`}>
          <line x1={l.left} x2={l.right} y1={y(k.v)} y2={y(k.v)} stroke={t.grid} />
          <text x={l.left - fs * 0.4} y={y(k.v) + fs * 0.35} textAnchor="end" fill={t.muted} fontSize={fs} className="chart-tick">
            {k.text}
          </text>
        </g>
      ))}
      {xTicks.map((k) => (
        <g key={`x${k.v}`}>
          <line x1={x(k.v)} x2={x(k.v)} y1={l.bottom} y2={l.bottom + fs * 0.3} stroke={t.muted} />
          <text x={x(k.v)} y={l.bottom + fs * 1.4} textAnchor="middle" fill={t.muted} fontSize={fs} className="chart-tick">
            {k.text}
          </text>
        </g>
      ))}
      <line x1={l.left} x2={l.right} y1={l.bottom} y2={l.bottom} stroke={t.muted} className="chart-axis" />
      <line x1={l.left} x2={l.left} y1={l.top} y2={l.bottom} stroke={t.muted} className="chart-axis" />
      <text x={(l.left + l.right) / 2} y={l.height - fs * 0.5} textAnchor="middle" fill={t.text} fontSize={fs} className="chart-axis-label">
        {axisTitle(xAxis)}
      </text>
      <text
        transform={`translate(${fs * 1.1}, ${(l.top + l.bottom) / 2}) rotate(-90)`}
        textAnchor="middle"
        fill={t.text}
        fontSize={fs}
        className="chart-axis-label"
      >
        {axisTitle(yAxis)}
      </text>
      {children}
    </>
  );
}

/// Everything a line chart needs to draw and to answer "what is under the pointer".
export function lineGeometry(spec: LineSpec, width: number, height: number, t: ChartTheme) {
  const xs = spec.series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = spec.series.flatMap((s) => s.points.map((p) => p[1])).concat((spec.thresholds ?? []).map((h) => h.y));
  const yNice = niceTicks(range(ys, spec.yZero ?? true), 5);
  const yTicks = yNice.ticks.map((v) => ({ v, text: spec.y.format(v) }));
  const l = layout(
    spec.series.map((s) => ({ name: s.name, dashed: !!s.dashed })),
    yTicks.map((k) => k.text),
    width,
    height,
    t,
  );
  const xr: Range = spec.x.time ? range(xs, false) : niceTicks(range(xs, false), 6).range;
  const xTickValues = spec.x.time
    ? timeTicks(xr, Math.max(2, Math.floor((l.right - l.left) / (t.fontSize * 8))))
    : niceTicks(xr, Math.max(2, Math.floor((l.right - l.left) / (t.fontSize * 6)))).ticks.filter((v) => v >= xr.lo && v <= xr.hi);
  const x = linear(xr, l.left, l.right);
  const y = linear(yNice.range, l.bottom, l.top);
  return { l, x, y, xr, yTicks, xTicks: xTickValues.map((v) => ({ v, text: spec.x.format(v) })) };
}

export function LineSvg({
  spec,
  width,
  height,
  theme: t,
  hoverX,
}: {
  spec: LineSpec;
  width: number;
  height: number;
  theme: ChartTheme;
  hoverX?: number | null;
}) {
  const g = lineGeometry(spec, width, height, t);
  const { l, x, y } = g;
  const colorOf = (i: number) => t.series[(spec.series[i]?.color ?? i) % t.series.length]!;
  const fs = t.fontSize;
  return (
    <svg
      xmlns="http://www.w3.org/2000/svg"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      fontFamily={t.fontFamily}
      role="img"
      aria-label={spec.title}
    >
      <Frame title={spec.title} l={l} t={t} xTicks={g.xTicks} yTicks={g.yTicks} x={x} y={y} xAxis={spec.x} yAxis={spec.y}>
        <Legend l={l} t={t} colorOf={colorOf} />
        {(spec.thresholds ?? []).map((h) => (
          <g key={h.label} className="chart-threshold">
            <line
              x1={l.left}
              x2={l.right}
              y1={y(h.y)}
              y2={y(h.y)}
              stroke={h.tone === "bad" ? t.bad : t.warn}
              strokeDasharray="4 4"
              strokeWidth={2}
            />
            <text
              x={l.right - fs * 0.3}
              y={h.tone === "bad" ? Math.min(l.bottom - fs * 0.2, y(h.y) + fs * 1.1) : y(h.y) - fs * 0.3}
              textAnchor="end"
              fill={h.tone === "bad" ? t.bad : t.warn}
              fontSize={fs}
            >
              {h.label}
            </text>
          </g>
        ))}
        {spec.series.map((s, i) => (
          <g key={s.name}>
            <polyline
              fill="none"
              stroke={colorOf(i)}
              strokeWidth={2.5}
              strokeDasharray={s.dashed ? "8 5" : undefined}
              points={s.points.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(" ")}
            />
            {s.points.length <= 60 &&
              s.points.map(([a, b]) => (
                <circle key={`${a}`} cx={x(a)} cy={y(b)} r={3} fill={colorOf(i)}>
                  <title>{`${s.name}: ${spec.y.format(b)}${spec.y.unit ? ` ${spec.y.unit}` : ""} · ${spec.x.format(a)}`}</title>
                </circle>
              ))}
          </g>
        ))}
        {hoverX !== null && hoverX !== undefined && (
          <line x1={x(hoverX)} x2={x(hoverX)} y1={l.top} y2={l.bottom} stroke={t.muted} strokeDasharray="2 3" />
        )}
      </Frame>
    </svg>
  );
}

export interface BarSpec {
  title: string;
  x: Axis;
  y: Axis;
  /// One label per bar; the values are stacked (one per series).
  bars: { label: string; values: number[] }[];
  names: string[];
  /// Colours by index into the theme's series, or "bad" for failures.
  colors: (number | "bad")[];
}

export function barGeometry(spec: BarSpec, width: number, height: number, t: ChartTheme) {
  const totals = spec.bars.map((b) => b.values.reduce((a, v) => a + v, 0));
  const yNice = niceTicks(range(totals, true), 4);
  const yTicks = yNice.ticks.map((v) => ({ v, text: spec.y.format(v) }));
  const l = layout(
    spec.names.map((n) => ({ name: n, dashed: false })),
    yTicks.map((k) => k.text),
    width,
    height,
    t,
  );
  const n = Math.max(1, spec.bars.length);
  const slot = (l.right - l.left) / n;
  const y = linear(yNice.range, l.bottom, l.top);
  // Every label that fits: at most one per 7 text widths.
  const every = Math.max(1, Math.ceil((Math.max(...spec.bars.map((b) => textWidth(b.label, t.fontSize)), 1) + t.fontSize) / slot));
  return { l, slot, y, yTicks, every };
}

export function BarSvg({
  spec,
  width,
  height,
  theme: t,
  selected,
  hover,
}: {
  spec: BarSpec;
  width: number;
  height: number;
  theme: ChartTheme;
  selected?: number | null;
  hover?: number | null;
}) {
  const g = barGeometry(spec, width, height, t);
  const { l, slot, y } = g;
  const color = (c: number | "bad" | undefined) => (c === "bad" ? t.bad : t.series[(c ?? 0) % t.series.length]!);
  const x = (i: number) => l.left + i * slot;
  const xTicks = spec.bars.map((b, i) => ({ v: i, text: i % g.every === 0 ? b.label : "" })).filter((k) => k.text);
  return (
    <svg
      xmlns="http://www.w3.org/2000/svg"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      fontFamily={t.fontFamily}
      role="img"
      aria-label={spec.title}
    >
      <Frame
        title={spec.title}
        l={l}
        t={t}
        xTicks={xTicks}
        yTicks={g.yTicks}
        x={(i) => x(i) + slot / 2}
        y={y}
        xAxis={spec.x}
        yAxis={spec.y}
      >
        <Legend l={l} t={t} colorOf={(i) => color(spec.colors[i])} />
        {spec.bars.map((b, i) => {
          let base = 0;
          return (
            <g key={b.label} className="chart-bar" data-index={i}>
              {(hover === i || selected === i) && (
                <rect x={x(i)} y={l.top} width={slot} height={l.bottom - l.top} fill={t.grid} opacity={selected === i ? 0.8 : 0.4} />
              )}
              {b.values.map((v, k) => {
                const y0 = y(base);
                base += v;
                return v > 0 ? (
                  <rect
                    key={k}
                    x={x(i) + slot * 0.15}
                    width={slot * 0.7}
                    y={y(base)}
                    height={Math.max(0, y0 - y(base))}
                    fill={color(spec.colors[k])}
                  >
                    <title>{`${b.label} · ${spec.names[k]}: ${spec.y.format(v)}`}</title>
                  </rect>
                ) : null;
              })}
            </g>
          );
        })}
      </Frame>
    </svg>
  );
}
