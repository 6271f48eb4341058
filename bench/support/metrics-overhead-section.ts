/**
 * The "Metrics overhead" section of bench/RESULTS.md. `npm run bench:metrics` measures it and writes
 * bench/METRICS-OVERHEAD.md; its summary sits between these markers there and in RESULTS.md, so
 * `npm run bench`, which rewrites RESULTS.md whole, copies the latest summary back in instead of losing it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './children';

export const METRICS_SECTION_START = '<!-- metrics-overhead:start -->';
export const METRICS_SECTION_END = '<!-- metrics-overhead:end -->';
const METRICS_FILE = join(REPO, 'bench', 'METRICS-OVERHEAD.md');

/** The section's lines around a summary. */
export function metricsOverheadSection(summary: string): string[] {
  return [
    '## Metrics overhead (METRICS_PORT)',
    '',
    'Not measured by `npm run bench`: `npm run bench:metrics` (bench/metrics-overhead.ts) runs the service with and without METRICS_PORT in paired rounds and writes bench/METRICS-OVERHEAD.md; this is its summary, copied here by both commands.',
    '',
    METRICS_SECTION_START,
    summary,
    METRICS_SECTION_END,
  ];
}

/** The text between the markers, or undefined when there is none. */
export function summaryBetweenMarkers(text: string): string | undefined {
  const start = text.indexOf(METRICS_SECTION_START);
  const end = text.indexOf(METRICS_SECTION_END);
  if (start === -1 || end < start) return undefined;
  return text.slice(start + METRICS_SECTION_START.length, end).trim();
}

/** The latest summary of bench/METRICS-OVERHEAD.md, if that file exists. */
export function latestMetricsOverheadSummary(): string | undefined {
  return existsSync(METRICS_FILE)
    ? summaryBetweenMarkers(readFileSync(METRICS_FILE, 'utf8'))
    : undefined;
}

/** RESULTS.md with this summary: between its markers when it has them, else as a new section at the end. */
export function withMetricsOverheadSection(
  results: string,
  summary: string,
): string {
  const start = results.indexOf(METRICS_SECTION_START);
  const end = results.indexOf(METRICS_SECTION_END);
  if (start !== -1 && end > start)
    return `${results.slice(0, start + METRICS_SECTION_START.length)}\n${summary}\n${results.slice(end)}`;
  return `${results.replace(/\n*$/, '\n')}\n${metricsOverheadSection(summary).join('\n')}\n`;
}
