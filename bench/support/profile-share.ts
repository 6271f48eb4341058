/**
 * Where a service's CPU went, from a V8 CPU profile (node --cpu-prof): the share of its busy samples (idle
 * excluded) spent in the metrics code, counted by stack, so a prom-client call made from a hook counts once.
 * Immune to what else the machine did meanwhile, unlike any timing: the low-noise side of the metrics bench.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

/** Frames that are the metrics' own work: prom-client, our src/infra/metrics, Node's GC observer that prom-client installs. */
const METRICS_CODE = [
  /\/prom-client\//,
  /\/infra\/metrics\//,
  /^node:internal\/perf\/observe$/,
];

export interface ProfileShare {
  busySamples: number;
  metricsSamples: number;
  /** metricsSamples / busySamples. */
  share: number;
}

export function metricsShareOfProfile(file: string): ProfileShare {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  const inMetrics = new Map<number, boolean>();
  const isMetrics = (id: number): boolean => {
    const known = inMetrics.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const parent = parentOf.get(id);
    const answer =
      node !== undefined &&
      (METRICS_CODE.some((pattern) => pattern.test(node.callFrame.url)) ||
        (parent !== undefined && isMetrics(parent)));
    inMetrics.set(id, answer);
    return answer;
  };
  let busySamples = 0;
  let metricsSamples = 0;
  for (const id of profile.samples) {
    if (byId.get(id)?.callFrame.functionName === '(idle)') continue;
    busySamples += 1;
    if (isMetrics(id)) metricsSamples += 1;
  }
  return {
    busySamples,
    metricsSamples,
    share: busySamples > 0 ? metricsSamples / busySamples : Number.NaN,
  };
}
