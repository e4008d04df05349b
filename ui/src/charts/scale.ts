// Axis arithmetic for the charts: ranges, "nice" ticks, and tick labels.

export interface Range {
  lo: number;
  hi: number;
}

/// The range of `values` (0 included when `zero`), never empty.
export function range(values: number[], zero: boolean): Range {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  if (!Number.isFinite(lo)) return { lo: 0, hi: 1 };
  if (zero) {
    lo = Math.min(lo, 0);
    hi = Math.max(hi, 0);
  }
  if (hi - lo < 1e-12) hi = lo + (Math.abs(lo) > 0 ? Math.abs(lo) * 0.1 : 1);
  return { lo, hi };
}

/// About `count` round ticks covering the range (1, 2 or 5 times a power of ten apart);
/// the range is widened to the outer ticks.
export function niceTicks(r: Range, count: number): { ticks: number[]; range: Range } {
  const span = r.hi - r.lo;
  const raw = span / Math.max(1, count);
  const pow = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? 10 * pow;
  const lo = Math.floor(r.lo / step + 1e-9) * step;
  const hi = Math.ceil(r.hi / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let v = lo; v <= hi + step / 2; v += step) ticks.push(Math.abs(v) < step / 1e6 ? 0 : v);
  return { ticks, range: { lo, hi: hi > lo ? hi : lo + step } };
}

/// Ticks for a time axis (milliseconds): days, hours or minutes apart.
export function timeTicks(r: Range, count: number): number[] {
  const span = r.hi - r.lo;
  const steps = [60e3, 300e3, 900e3, 3600e3, 6 * 3600e3, 86400e3, 7 * 86400e3, 30 * 86400e3, 91 * 86400e3, 365 * 86400e3];
  const step = steps.find((s) => span / s <= count) ?? span / count;
  const out: number[] = [];
  for (let v = Math.ceil(r.lo / step) * step; v <= r.hi; v += step) out.push(v);
  return out;
}

export function linear(r: Range, a: number, b: number) {
  return (v: number) => a + ((v - r.lo) / (r.hi - r.lo)) * (b - a);
}
