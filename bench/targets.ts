/**
 * The targets of GitHub issue 34 "Capacity, the last mile" (point 2) on top of those of "Chat at scale",
 * checked against every `npm run bench` (never in the Jest suite). Keys are `<scenario>.<metric>` (see
 * bench/scenarios.ts). Each rule is judged over the rounds of one run: per-round comparisons with the bare
 * relay of the same round, then their median. Ratios are not capped: the bare relay's ramp in b goes on
 * until it fails.
 */
import { median } from './support/stats';

export type Rule =
  /** median over rounds of (service / bare) <= max */
  | { kind: 'ratioAtMost'; max: number }
  /** median over rounds of (service / bare) >= min */
  | { kind: 'ratioAtLeast'; min: number }
  /** median over rounds of (service - bare) <= plus (same unit as the metric) */
  | { kind: 'overBareAtMost'; plus: number }
  /** median over rounds of the service's value <= max */
  | { kind: 'atMost'; max: number }
  /** the service's value is 0 in every round */
  | { kind: 'zeroEveryRound' }
  /** the service's value is 1 (true) in every round */
  | { kind: 'trueEveryRound' };

export const TARGETS: Readonly<Record<string, Rule>> = {
  // a. one request at a time, 3-token answers
  'a.startP50': { kind: 'overBareAtMost', plus: 5 },
  'a.startP99': { kind: 'overBareAtMost', plus: 15 },
  'a.cpuPerRequest': { kind: 'ratioAtMost', max: 4 },
  // b. sustained stream starts per second (open loop)
  'b.maxRate': { kind: 'ratioAtLeast', min: 0.8 },
  // c. 200 simultaneous streams
  'c.cpuPerStream': { kind: 'ratioAtMost', max: 2.5 },
  // d. 1,000 simultaneous streams
  'd.errors': { kind: 'zeroEveryRound' },
  'd.lostTokens': { kind: 'zeroEveryRound' },
  'd.startP99': { kind: 'ratioAtMost', max: 2 },
  'd.rssPerStream': { kind: 'atMost', max: 48 },
  // h. 3,000 simultaneous streams: as d
  'h.errors': { kind: 'zeroEveryRound' },
  'h.lostTokens': { kind: 'zeroEveryRound' },
  'h.startP99': { kind: 'ratioAtMost', max: 2 },
  'h.rssPerStream': { kind: 'atMost', max: 48 },
  // e. 5,000 simultaneous streams: served or refused at once (none lost), still alive, and serving at least
  // 0.6x as many as the bare relay (which has no admission control) serves
  'e.served': { kind: 'ratioAtLeast', min: 0.6 },
  'e.otherErrors': { kind: 'zeroEveryRound' },
  'e.refusedSlow': { kind: 'zeroEveryRound' },
  'e.alive': { kind: 'trueEveryRound' },
  // f. request rate of two cheap routes at 50 keep-alive connections
  'f.plansPerSecond': { kind: 'ratioAtLeast', min: 0.6 },
  'f.mePerSecond': { kind: 'ratioAtLeast', min: 0.6 },
};

export function describeRule(rule: Rule, unit: string): string {
  const u = unit ? ` ${unit}` : '';
  switch (rule.kind) {
    case 'ratioAtMost':
      return `≤ ${rule.max}× bare`;
    case 'ratioAtLeast':
      return `≥ ${rule.min}× bare`;
    case 'overBareAtMost':
      return `≤ bare + ${rule.plus}${u}`;
    case 'atMost':
      return `≤ ${rule.max}${u}`;
    case 'zeroEveryRound':
      return '0 in every round';
    case 'trueEveryRound':
      return 'yes in every round';
  }
}

export interface RoundPair {
  bare: number;
  service: number;
}

export interface Verdict {
  pass: boolean;
  /** The number the rule compared, e.g. the median ratio. */
  judged: number;
}

/** Undefined when there is nothing to judge (no round measured the service). */
export function judge(
  rule: Rule,
  rounds: readonly RoundPair[],
): Verdict | undefined {
  const service = rounds.map((round) => round.service);
  if (!service.some((value) => Number.isFinite(value))) {
    return rule.kind === 'zeroEveryRound' || rule.kind === 'trueEveryRound'
      ? { pass: false, judged: Number.NaN }
      : undefined;
  }
  switch (rule.kind) {
    case 'ratioAtMost': {
      const judged = median(rounds.map(ratio));
      return { pass: judged <= rule.max, judged };
    }
    case 'ratioAtLeast': {
      const judged = median(rounds.map(ratio));
      return { pass: judged >= rule.min, judged };
    }
    case 'overBareAtMost': {
      const judged = median(rounds.map((round) => round.service - round.bare));
      return { pass: judged <= rule.plus, judged };
    }
    case 'atMost': {
      const judged = median(service);
      return { pass: judged <= rule.max, judged };
    }
    case 'zeroEveryRound':
      return {
        pass: service.every((value) => value === 0),
        judged: Math.max(...service),
      };
    case 'trueEveryRound':
      return {
        pass: service.every((value) => value === 1),
        judged: Math.min(...service),
      };
  }
}

/** service / bare of one round; NaN when either is missing or bare is 0. */
export function ratio(round: RoundPair): number {
  if (
    !Number.isFinite(round.bare) ||
    !Number.isFinite(round.service) ||
    round.bare === 0
  )
    return Number.NaN;
  return round.service / round.bare;
}
