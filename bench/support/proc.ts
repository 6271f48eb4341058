/**
 * Server-side measurements the way an operator sees them: from /proc, outside the measured process.
 * CPU = utime + stime of /proc/<pid>/stat (every thread of the process), RSS = VmRSS of /proc/<pid>/status.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

/** `getconf CLK_TCK` (100 on Linux nearly always). */
export function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const answer = Number(
      execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim(),
    );
    ticksPerSecond = Number.isFinite(answer) && answer > 0 ? answer : 100;
  }
  return ticksPerSecond;
}

/** CPU time (user + system) the process has used so far, ms; NaN when it is gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: count fields from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / clockTicks();
  } catch {
    return Number.NaN;
  }
}

/** Resident set size, bytes; NaN when the process is gone. */
export function rssBytes(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
    return match ? Number(match[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie (exited, not yet reaped) still answers kill 0.
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** CPU used so far by each PostgreSQL backend connected to one database (its process title names it), ms by pid. */
export function postgresBackends(database: string): Map<number, number> {
  const backends = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `postgres: [cluster: ]user database host(port) state`
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (
        !cmdline.startsWith('postgres:') ||
        !cmdline.includes(` ${database} `)
      )
        continue;
      const cpu = cpuMs(Number(entry));
      if (Number.isFinite(cpu)) backends.set(Number(entry), cpu);
    } catch {
      // the process ended while we looked
    }
  }
  return backends;
}

/** Sum of the CPU used so far by the database's current backends, ms. */
export function postgresCpuMs(database: string): number {
  let total = 0;
  for (const cpu of postgresBackends(database).values()) total += cpu;
  return total;
}

/**
 * CPU the database's backends use from construction to stop(), ms. Sampled every `everyMs` per backend, so a
 * backend that exits meanwhile (the service's pool closes idle connections) keeps what it had used until its
 * last sample instead of taking its whole history out of a plain before/after sum.
 */
export class BackendCpu {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly database: string,
    everyMs = 250,
  ) {
    for (const [pid, cpu] of postgresBackends(database)) {
      this.first.set(pid, cpu);
      this.last.set(pid, cpu);
    }
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  private sample(): void {
    for (const [pid, cpu] of postgresBackends(this.database)) {
      // A backend born meanwhile counts from 0.
      if (!this.first.has(pid)) this.first.set(pid, 0);
      this.last.set(pid, cpu);
    }
  }

  stop(): number {
    clearInterval(this.timer);
    this.sample();
    let total = 0;
    for (const [pid, cpu] of this.last)
      total += cpu - (this.first.get(pid) ?? 0);
    return total;
  }
}

/** Samples a process's RSS every `everyMs` until stop(): the value before and the peak. */
export class RssSampler {
  readonly before: number;
  private peak: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    everyMs = 50,
  ) {
    this.before = rssBytes(pid);
    this.peak = this.before;
    this.timer = setInterval(() => this.sample(), everyMs);
  }

  private sample(): number {
    const rss = rssBytes(this.pid);
    if (rss > this.peak) this.peak = rss;
    return rss;
  }

  stop(): { before: number; peak: number; after: number } {
    clearInterval(this.timer);
    const after = this.sample();
    return { before: this.before, peak: this.peak, after };
  }
}

/**
 * Machine-wide count of connections the kernel dropped because a listen (accept) queue was full
 * (TcpExt ListenOverflows in /proc/net/netstat): clients then retry their SYN after 1 s, 3 s, 7 s...
 */
export function listenOverflows(): number {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n');
    for (let index = 0; index + 1 < lines.length; index += 2) {
      if (!lines[index].startsWith('TcpExt:')) continue;
      const names = lines[index].split(/\s+/);
      const values = lines[index + 1].split(/\s+/);
      const at = names.indexOf('ListenOverflows');
      return at === -1 ? Number.NaN : Number(values[at]);
    }
  } catch {
    // not Linux
  }
  return Number.NaN;
}

/** Machine-wide CPU time so far, ms of all cores: busy (user, nice, system, irq, softirq) and steal. */
export function machineCpuMs(): { busy: number; steal: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const [user, nice, system, , , irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const ms = 1000 / clockTicks();
    return {
      busy: (user + nice + system + irq + softirq) * ms,
      steal: (steal || 0) * ms,
    };
  } catch {
    return { busy: Number.NaN, steal: Number.NaN };
  }
}
