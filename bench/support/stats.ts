/** Nearest-rank percentile (p in 0..100); NaN for an empty sample. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[
    Math.min(
      sorted.length - 1,
      Math.max(0, Math.ceil((p / 100) * sorted.length) - 1),
    )
  ];
}

/** Median of the finite values (the mean of the middle two for an even count); NaN when there is none. */
export function median(values: readonly number[]): number {
  const finite = values
    .filter((value) => Number.isFinite(value))
    .sort((a, b) => a - b);
  if (finite.length === 0) return Number.NaN;
  const middle = finite.length >> 1;
  return finite.length % 2 === 1
    ? finite[middle]
    : (finite[middle - 1] + finite[middle]) / 2;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  count: number;
}

export function spread(values: readonly number[]): Spread {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length === 0)
    return { median: Number.NaN, min: Number.NaN, max: Number.NaN, count: 0 };
  return {
    median: median(finite),
    min: Math.min(...finite),
    max: Math.max(...finite),
    count: finite.length,
  };
}

export function max(values: readonly number[]): number {
  let result = Number.NaN;
  for (const value of values) if (!(value <= result)) result = value;
  return result;
}

export function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/** A number with sensible precision: 0.123, 1.23, 12.3, 123, 1234. */
export function fmt(value: number): string {
  if (!Number.isFinite(value))
    return Number.isNaN(value) ? 'n/a' : value > 0 ? '∞' : '-∞';
  const abs = Math.abs(value);
  if (abs === 0) return '0';
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

/** `median [min–max]`, or just the value when there is one round or no spread. */
export function fmtSpread(s: Spread, unit = ''): string {
  const suffix = unit ? ` ${unit}` : '';
  if (s.count === 0) return 'n/a';
  if (s.count === 1 || s.min === s.max) return `${fmt(s.median)}${suffix}`;
  return `${fmt(s.median)}${suffix} [${fmt(s.min)}–${fmt(s.max)}]`;
}

/** P(X >= k) for X ~ Binomial(n, 1/2): the one-sided sign test's p-value (n without the ties). */
export function signTestP(k: number, n: number): number {
  let total = 0;
  let choose = 1;
  for (let i = 0; i <= n; i++) {
    if (i >= k) total += choose;
    choose = (choose * (n - i)) / (i + 1);
  }
  return total / 2 ** n;
}
