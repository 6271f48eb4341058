/**
 * Sections of bench/RESULTS.md measured by commands of their own: `npm run bench:metrics` (what METRICS_PORT
 * costs, bench/METRICS-OVERHEAD.md) and `npm run bench:builds` (this build against an earlier one,
 * bench/BUILDS-COMPARED.md). Each writes its file whole with its summary between markers, and puts that
 * summary into RESULTS.md; `npm run bench`, which rewrites RESULTS.md whole, copies the latest summaries back
 * in instead of losing them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './children';

export interface KeptSection {
  start: string;
  end: string;
  /** The file the measuring command writes whole. */
  file: string;
  title: string;
  intro: string;
}

export const METRICS_OVERHEAD: KeptSection = {
  start: '<!-- metrics-overhead:start -->',
  end: '<!-- metrics-overhead:end -->',
  file: join(REPO, 'bench', 'METRICS-OVERHEAD.md'),
  title: '## Metrics overhead (METRICS_PORT)',
  intro:
    'Not measured by `npm run bench`: `npm run bench:metrics` (bench/metrics-overhead.ts) runs the service with and without METRICS_PORT in paired rounds and writes bench/METRICS-OVERHEAD.md; this is its summary, copied here by both commands.',
};

export const BUILDS_COMPARED: KeptSection = {
  start: '<!-- builds-compared:start -->',
  end: '<!-- builds-compared:end -->',
  file: join(REPO, 'bench', 'BUILDS-COMPARED.md'),
  title: '## This build against an earlier one (a plain chat)',
  intro:
    'Not measured by `npm run bench`: `npm run bench:builds` (bench/compare-builds.ts) runs this build and an earlier checkout side by side in paired rounds and writes bench/BUILDS-COMPARED.md; this is its summary, copied here by both commands.',
};

export const KEPT_SECTIONS: readonly KeptSection[] = [
  METRICS_OVERHEAD,
  BUILDS_COMPARED,
];

/** The section's lines around a summary. */
export function keptSectionLines(
  section: KeptSection,
  summary: string,
): string[] {
  return [
    section.title,
    '',
    section.intro,
    '',
    section.start,
    summary,
    section.end,
  ];
}

/** The text between the section's markers, or undefined when there is none. */
export function summaryBetweenMarkers(
  section: KeptSection,
  text: string,
): string | undefined {
  const start = text.indexOf(section.start);
  const end = text.indexOf(section.end);
  if (start === -1 || end < start) return undefined;
  return text.slice(start + section.start.length, end).trim();
}

/** The latest summary in the section's own file, if that file exists. */
export function latestSummary(section: KeptSection): string | undefined {
  return existsSync(section.file)
    ? summaryBetweenMarkers(section, readFileSync(section.file, 'utf8'))
    : undefined;
}

/** RESULTS.md with this summary: between the section's markers when it has them, else as a new section at the end. */
export function withKeptSection(
  section: KeptSection,
  results: string,
  summary: string,
): string {
  const start = results.indexOf(section.start);
  const end = results.indexOf(section.end);
  if (start !== -1 && end > start)
    return `${results.slice(0, start + section.start.length)}\n${summary}\n${results.slice(end)}`;
  return `${results.replace(/\n*$/, '\n')}\n${keptSectionLines(section, summary).join('\n')}\n`;
}
