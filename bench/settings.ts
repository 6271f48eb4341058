/** Sizes of a run: the full run (default, 3 rounds, under 15 minutes on 2 cores) and --quick (1 round, ~3 minutes). */
export interface Settings {
  mode: 'full' | 'quick';
  rounds: number;
  /** Users (each with a session) the chat requests are spread over, round-robin. */
  users: number;
  /** a. sequential 3-token requests */
  sequential: { requests: number; deadlineMs: number };
  /** b. open-loop stream starts per second: probe length, search start, cap, floor, precision (hi/lo), most probes per search (first round / later rounds) */
  rate: {
    durationMs: number;
    start: number;
    cap: number;
    floor: number;
    precision: number;
    maxProbes: number;
    maxProbesLater: number;
    maxStartMs: number;
    deadlineMs: number;
  };
  /** c. simultaneous streams */
  burstSmall: { streams: number; deadlineMs: number };
  /** d. simultaneous streams */
  burstLarge: { streams: number; deadlineMs: number };
  /** e. simultaneous streams, served or refused at once */
  overload: { streams: number; fastRefusalMs: number; deadlineMs: number };
  /** g. retries of one finished request (service only) */
  replay: { requests: number };
  /** f. keep-alive GETs */
  requestRate: { connections: number; warmupMs: number; durationMs: number };
  /**
   * Before every measurement: no mock stream open and both targets' CPU under `cpuPercent` of a core for
   * `windowMs`, waiting at most `maxWaitMs`; a service still busy then is restarted (and warmed up).
   */
  settle: { cpuPercent: number; windowMs: number; maxWaitMs: number };
  /**
   * Safety net for the time limit (15 minutes full): a round is not started when the time since the start
   * of the bench plus the previous round's duration would pass this. A skipped round is reported.
   */
  budgetMs: number;
}

export const FULL: Settings = {
  mode: 'full',
  rounds: 3,
  users: 200,
  sequential: { requests: 200, deadlineMs: 10_000 },
  rate: {
    durationMs: 5_000,
    start: 40,
    cap: 400,
    floor: 2,
    precision: 1.1,
    maxProbes: 6,
    maxProbesLater: 4,
    maxStartMs: 1_000,
    deadlineMs: 15_000,
  },
  burstSmall: { streams: 200, deadlineMs: 12_000 },
  burstLarge: { streams: 1_000, deadlineMs: 12_000 },
  overload: { streams: 5_000, fastRefusalMs: 1_000, deadlineMs: 15_000 },
  requestRate: { connections: 50, warmupMs: 1_000, durationMs: 5_000 },
  replay: { requests: 200 },
  settle: { cpuPercent: 5, windowMs: 1_000, maxWaitMs: 6_000 },
  budgetMs: 14.25 * 60_000,
};

export const QUICK: Settings = {
  ...FULL,
  mode: 'quick',
  rounds: 1,
  sequential: { requests: 100, deadlineMs: 10_000 },
  rate: {
    ...FULL.rate,
    durationMs: 3_000,
    precision: 1.5,
    maxProbes: 6,
    maxProbesLater: 4,
  },
  burstSmall: { streams: 100, deadlineMs: 12_000 },
  burstLarge: { streams: 300, deadlineMs: 12_000 },
  overload: { streams: 1_000, fastRefusalMs: 1_000, deadlineMs: 15_000 },
  requestRate: { connections: 50, warmupMs: 500, durationMs: 2_000 },
  replay: { requests: 100 },
  settle: { cpuPercent: 5, windowMs: 500, maxWaitMs: 6_000 },
  budgetMs: 6 * 60_000,
};
