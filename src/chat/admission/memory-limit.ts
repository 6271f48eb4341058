import { totalmem } from 'node:os';

/** Anything at or above this is "no limit" (cgroup v1 reports 2^63 rounded to pages, v2 reports `max`). */
const UNLIMITED = 2 ** 60;

/**
 * The memory this process may use before it is killed: the operator's figure when set, else the container's
 * limit (cgroup, as Node reads it), else the machine's memory.
 */
export function memoryLimitBytes(
  configuredBytes: number | undefined,
  constrained: number | undefined = readConstrainedMemory(),
  machine: number = totalmem(),
): { bytes: number; source: 'configured' | 'container' | 'machine' } {
  if (configuredBytes !== undefined && configuredBytes > 0)
    return { bytes: configuredBytes, source: 'configured' };
  if (constrained !== undefined && constrained > 0 && constrained < UNLIMITED)
    return { bytes: Math.min(constrained, machine), source: 'container' };
  return { bytes: machine, source: 'machine' };
}

/** process.constrainedMemory() (Node 19.6+): the cgroup's limit, 0 or a huge number when there is none. */
function readConstrainedMemory(): number | undefined {
  const read = (process as { constrainedMemory?: () => number | undefined })
    .constrainedMemory;
  return typeof read === 'function' ? read() : undefined;
}
