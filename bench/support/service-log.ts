/** The service's JSON log (pino) as the bench collected it: warn-or-worse lines, counted by message. */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { isObject } from './protocol';

const SERIOUS = new Set(['warn', 'error', 'fatal', '40', '50', '60']);

export class ServiceLog {
  constructor(readonly file: string) {}

  /** Current size of the log: pass it to `seriousSince` to look at what came after. */
  mark(): number {
    try {
      return statSync(this.file).size;
    } catch {
      return 0;
    }
  }

  private read(from: number): string {
    const size = this.mark();
    if (size <= from) return '';
    const fd = openSync(this.file, 'r');
    try {
      const buffer = Buffer.alloc(size - from);
      readSync(fd, buffer, 0, buffer.length, from);
      return buffer.toString('utf8');
    } finally {
      closeSync(fd);
    }
  }

  /** Lines at warn or above written since `from`, counted by `level: msg (error type: message)`. */
  seriousSince(from = 0): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const line of this.read(from).split('\n')) {
      if (!line.trim()) continue;
      const label = seriousLabel(line);
      if (label) counts[label] = (counts[label] ?? 0) + 1;
    }
    return counts;
  }

  /** The last `count` lines (for a service that died). */
  tail(count: number): string[] {
    const size = this.mark();
    const text = this.read(Math.max(0, size - 64 * 1024));
    return text
      .split('\n')
      .filter((line) => line.trim())
      .slice(-count);
  }
}

function seriousLabel(line: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    // Not JSON: anything the process printed outside the logger is worth seeing.
    return `raw: ${line.slice(0, 160)}`;
  }
  if (!isObject(parsed)) return undefined;
  const level = textOf(parsed.level ?? '');
  if (!SERIOUS.has(level)) return undefined;
  const err = isObject(parsed.err) ? parsed.err : undefined;
  const detail = err
    ? ` (${textOf(err.type ?? '')}${err.code !== undefined ? ` ${textOf(err.code)}` : ''}: ${textOf(err.message ?? '').slice(0, 120)})`
    : '';
  const extra =
    typeof parsed.failure === 'string'
      ? ` [${parsed.failure}${typeof parsed.reason === 'string' ? `: ${parsed.reason.slice(0, 100)}` : ''}]`
      : '';
  const route = isObject(parsed.req)
    ? `${textOf(parsed.req.method ?? '')} ${textOf(parsed.req.path ?? '')} `
    : '';
  const status =
    isObject(parsed.res) && typeof parsed.res.statusCode === 'number'
      ? ` [${route}${parsed.res.statusCode}]`
      : '';
  return `${level}: ${textOf(parsed.msg ?? '')}${detail}${extra}${status}`;
}

/** A field of a parsed log line as text: a string as it is, anything else as JSON (as String() gives for numbers, booleans and null). */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
