/** bench/RESULTS.md: the whole file, rewritten on every run. */
import { Measurement, MetricDef, Scenario, TargetName } from '../scenarios';
import { Settings } from '../settings';
import {
  describeRule,
  judge,
  ratio,
  RoundPair,
  TARGETS,
  Verdict,
} from '../targets';
import {
  KEPT_SECTIONS,
  keptSectionLines,
  latestSummary,
} from './kept-sections';
import { ServiceExit } from './service-process';
import { fmt, fmtSpread, median, spread } from './stats';

export interface RoundRecord {
  round: number;
  order: TargetName[];
  bare?: Measurement;
  service?: Measurement;
}

export interface ScenarioRecord {
  scenario: Scenario;
  rounds: RoundRecord[];
}

export interface RunInfo {
  startedAt: Date;
  command: string;
  settings: Settings;
  machine: {
    cpuModel: string;
    cpus: number;
    ramBytes: number;
    kernel: string;
    node: string;
    postgres: string;
    redis: string;
  };
  buildMs: number | undefined;
  setupMs: number;
  runMs: number;
  totalMs: number;
  records: ScenarioRecord[];
  serviceLog: Record<string, number>;
  /** Share of all cores used by processes outside the bench, per measurement. */
  otherLoad: number[];
  serviceExits: ServiceExit[];
  /** Times the service was started: 1 + restarts (after it stayed busy, or after it exited). */
  serviceStarts: number;
  database:
    | {
        byStatus: Record<string, number>;
        reservedLeft: number;
        ledgerEntries: number;
      }
    | undefined;
  mockStats: Record<string, number> | undefined;
  errors: string[];
}

export interface TargetOutcome {
  key: string;
  scenario: string;
  label: string;
  rule: string;
  verdict: Verdict | undefined;
}

function valuesOf(
  record: ScenarioRecord,
  target: TargetName,
  key: string,
): number[] {
  return record.rounds.map((round) => round[target]?.values[key] ?? Number.NaN);
}

function pairsOf(record: ScenarioRecord, key: string): RoundPair[] {
  return record.rounds.map((round) => ({
    bare: round.bare?.values[key] ?? Number.NaN,
    service: round.service?.values[key] ?? Number.NaN,
  }));
}

function verdictText(
  verdict: Verdict | undefined,
  kind: string,
  unit: string,
): string {
  if (!verdict) return 'n/a';
  const judged =
    kind === 'ratioAtMost' || kind === 'ratioAtLeast'
      ? `${fmt(verdict.judged)}×`
      : kind === 'overBareAtMost'
        ? `${verdict.judged >= 0 ? '+' : ''}${fmt(verdict.judged)} ${unit}`
        : kind === 'trueEveryRound'
          ? ''
          : `${fmt(verdict.judged)}${unit ? ` ${unit}` : ''}`;
  return `**${verdict.pass ? 'PASS' : 'FAIL'}**${judged ? ` (${judged.trim()})` : ''}`;
}

export function targetOutcomes(records: ScenarioRecord[]): TargetOutcome[] {
  const outcomes: TargetOutcome[] = [];
  for (const record of records) {
    for (const metric of record.scenario.metrics) {
      const key = `${record.scenario.id}.${metric.key}`;
      const rule = TARGETS[key];
      if (!rule) continue;
      outcomes.push({
        key,
        scenario: record.scenario.id,
        label: metric.label,
        rule: describeRule(rule, metric.unit),
        verdict: judge(rule, pairsOf(record, metric.key)),
      });
    }
  }
  return outcomes;
}

function row(record: ScenarioRecord, metric: MetricDef): string {
  const key = `${record.scenario.id}.${metric.key}`;
  const rule = TARGETS[key];
  const notRun = (name: TargetName) =>
    record.scenario.targets !== undefined &&
    !record.scenario.targets.includes(name);
  const bare = spread(valuesOf(record, 'bare', metric.key));
  const service = spread(valuesOf(record, 'service', metric.key));
  const ratios = spread(pairsOf(record, metric.key).map(ratio));
  const ratioText =
    ratios.count === 0 || metric.ratio === false
      ? '–'
      : `${fmtSpread(ratios)}×`;
  const targetText = rule ? describeRule(rule, metric.unit) : '–';
  const result = rule
    ? verdictText(
        judge(rule, pairsOf(record, metric.key)),
        rule.kind,
        metric.unit,
      )
    : '';
  return `| ${metric.label}${metric.unit ? ` (${metric.unit})` : ''} | ${notRun('bare') ? 'not run' : fmtSpread(bare)} | ${notRun('service') ? 'not run' : fmtSpread(service)} | ${ratioText} | ${targetText} | ${result} |`;
}

function counts(map: Record<string, number>, limit = 8): string {
  const entries = Object.entries(map).sort((a, b) => b[1] - a[1]);
  const shown = entries
    .slice(0, limit)
    .map(([label, count]) => `${count}× ${label}`);
  if (entries.length > limit)
    shown.push(`… ${entries.length - limit} more kinds`);
  return shown.join('; ');
}

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds >= 60
    ? `${Math.floor(seconds / 60)} min ${seconds % 60} s`
    : `${seconds} s`;
}

function settingsLines(s: Settings): string[] {
  return [
    `- mode **${s.mode}**: ${s.rounds} round${s.rounds === 1 ? '' : 's'}; in every round each scenario runs against the bare relay and the service, one after the other, the first alternating (by round and scenario)`,
    `- ${s.users} users (plan enterprise, one session each, inserted with SQL), chat requests spread over them round-robin, every request with its own idempotencyKey`,
    `- a: ${s.sequential.requests} sequential requests; b: ${s.rate.durationMs / 1000} s probes, start ${s.rate.start}/s, safety cap ${s.rate.cap}/s, precision ×${s.rate.precision}, at most ${s.rate.maxProbes} probes (later rounds ${s.rate.maxProbesLater}), start p99 ≤ ${s.rate.maxStartMs} ms; ` +
      `c: ${s.burstSmall.streams} streams; d: ${s.burstLarge.streams} streams; h: ${s.burstHuge.streams} streams (deadline ${s.burstHuge.deadlineMs / 1000} s); e: ${s.overload.streams} streams (fast refusal ≤ ${s.overload.fastRefusalMs} ms); ` +
      `f: ${s.requestRate.connections} connections, ${s.requestRate.warmupMs / 1000} s warm-up + ${s.requestRate.durationMs / 1000} s; g: ${s.replay.requests} requests of one key (service only)`,
    `- before every measurement: no mock stream open and both targets under ${s.settle.cpuPercent} % of a core for ${s.settle.windowMs / 1000} s (at most ${s.settle.maxWaitMs / 1000} s wait)`,
    '- numbers are `median [min–max]` over rounds; the ratio column is the median [min–max] of the per-round ratios service / bare of the same round',
  ];
}

export function renderResults(info: RunInfo): string {
  const outcomes = targetOutcomes(info.records);
  const passed = outcomes.filter((outcome) => outcome.verdict?.pass === true);
  const failed = outcomes.filter((outcome) => outcome.verdict?.pass === false);
  const m = info.machine;
  const lines: string[] = [
    '# Chat streaming benchmark: results',
    '',
    'Written by `npm run bench` (bench/run.ts, see bench/README.md); the whole file is rewritten on every run. Targets: GitHub issue 34 "Capacity, the last mile" on top of "Chat at scale" (bench/targets.ts).',
    '',
    '| | |',
    '|---|---|',
    `| date | ${info.startedAt.toISOString()} |`,
    `| command | \`${info.command}\` |`,
    `| machine | ${m.cpuModel}, ${m.cpus} CPUs, ${(m.ramBytes / 1024 ** 3).toFixed(1)} GiB RAM, Linux ${m.kernel} |`,
    `| Node | ${m.node} |`,
    `| PostgreSQL | ${m.postgres} |`,
    `| Redis | ${m.redis} |`,
    `| other load | processes outside the bench used ${info.otherLoad.length > 0 ? `${fmt(median(info.otherLoad) * 100)} % (median) and up to ${fmt(Math.max(...info.otherLoad) * 100)} %` : 'n/a'} of the machine's CPU during the measurements |`,
    `| service restarts | ${info.serviceStarts - 1}${info.serviceStarts > 1 ? ' (it stayed busy after a measurement, or exited: see the notes below each table)' : ''} |`,
    `| time | ${info.buildMs !== undefined ? `build ${duration(info.buildMs)}, ` : 'build skipped, '}setup ${duration(info.setupMs)}, scenarios ${duration(info.runMs)}, total ${duration(info.totalMs)} |`,
    '',
    '## Settings',
    '',
    ...settingsLines(info.settings),
    '',
    '## Summary',
    '',
    `${passed.length} of ${outcomes.length} targets pass${failed.length > 0 ? `; failing: ${failed.map((outcome) => `${outcome.key} (${outcome.label})`).join(', ')}` : ''}.`,
    '',
    '| scenario | metric | target | result |',
    '|---|---|---|---|',
    ...outcomes
      .sort((a, b) => a.scenario.localeCompare(b.scenario))
      .map((outcome) => {
        const record = info.records.find(
          (r) => r.scenario.id === outcome.scenario,
        );
        const metric = record?.scenario.metrics.find(
          (def) => `${outcome.scenario}.${def.key}` === outcome.key,
        );
        const rule = TARGETS[outcome.key];
        return `| ${outcome.scenario} | ${outcome.label} | ${outcome.rule} | ${verdictText(outcome.verdict, rule.kind, metric?.unit ?? '')} |`;
      }),
  ];
  if (info.errors.length > 0)
    lines.push(
      '',
      '**The run had errors:**',
      '',
      ...info.errors.map((error) => `- ${error}`),
    );
  for (const exit of info.serviceExits) {
    lines.push(
      '',
      `**The service process exited ${exit.atSeconds} s into the run** (code ${exit.code}, signal ${exit.signal ?? 'none'}) without being asked to; the bench started it again for the remaining measurements. Its last log lines:`,
      '',
      '```',
      ...exit.lastLines.map((line) => line.slice(0, 400)),
      '```',
    );
  }

  for (const record of [...info.records].sort((a, b) =>
    a.scenario.id.localeCompare(b.scenario.id),
  )) {
    const { scenario } = record;
    lines.push(
      '',
      `## ${scenario.id}. ${scenario.title}`,
      '',
      scenario.definition(info.settings),
      '',
      '| metric | bare | service | service / bare | target | result |',
      '|---|---|---|---|---|---|',
    );
    for (const metric of scenario.metrics) lines.push(row(record, metric));
    const notes: string[] = [];
    for (const round of record.rounds) {
      for (const name of round.order) {
        const measurement = round[name];
        if (!measurement) continue;
        const parts: string[] = [];
        if (measurement.failed)
          parts.push(`not measured: ${measurement.failed}`);
        if (Object.keys(measurement.problems).length > 0)
          parts.push(`problems: ${counts(measurement.problems)}`);
        parts.push(...measurement.notes);
        if (measurement.logs && Object.keys(measurement.logs).length > 0)
          parts.push(`service log (warn+): ${counts(measurement.logs, 5)}`);
        if (parts.length > 0)
          notes.push(
            `- round ${round.round} ${name}${round.order.length > 1 && round.order[0] === name ? ' (first)' : ''}: ${parts.join(' — ')}`,
          );
      }
    }
    if (notes.length > 0) lines.push('', ...notes);
  }

  lines.push('', '## Service log', '');
  const serious = Object.entries(info.serviceLog);
  if (serious.length === 0) lines.push('No line at warn or above.');
  else
    lines.push(
      `Lines at warn or above over the whole run (${serious.reduce((total, [, count]) => total + count, 0)}):`,
      '',
      ...serious
        .sort((a, b) => b[1] - a[1])
        .slice(0, 25)
        .map(([label, count]) => `- ${count}× ${label}`),
    );
  if (info.database) {
    lines.push(
      '',
      '## Database after the run',
      '',
      `ChatRequest rows by status: ${
        Object.entries(info.database.byStatus)
          .map(([status, count]) => `${status} ${count}`)
          .join(', ') || 'none'
      }; ` +
        `credits still reserved: ${info.database.reservedLeft}; ledger entries: ${info.database.ledgerEntries}.` +
        (info.serviceStarts > 1 || info.serviceExits.length > 0
          ? ' Rows still `streaming` (and their reserved credits) are runs of a service process the bench restarted or that exited; the lease sweeper fails them and releases the credits once their lease (CHAT_LEASE_MS) runs out.'
          : ''),
    );
  }
  if (info.mockStats)
    lines.push(
      '',
      `Mock provider totals: ${Object.entries(info.mockStats)
        .map(([name, value]) => `${name} ${value}`)
        .join(', ')}.`,
    );
  // Measured by commands of their own (npm run bench:metrics, bench:builds): kept across runs of this one.
  for (const section of KEPT_SECTIONS) {
    const summary = latestSummary(section);
    if (summary) lines.push('', ...keptSectionLines(section, summary));
  }
  lines.push('');
  return lines.join('\n');
}
