/** Sizes of a run: the full run (default, 3 rounds, under 17 minutes on 2 cores) and --quick (1 round, under 5 minutes). */
export interface Settings {
  mode: 'full' | 'quick';
  rounds: number;
  /** Users (each with a session) the chat requests are spread over, round-robin. */
  users: number;
  /** a. sequential 3-token requests */
  sequential: { requests: number; deadlineMs: number };
  /**
   * b. open-loop stream starts per second: probe length, search start, cap, floor, precision (hi/lo), most
   * probes per search (first round / later rounds). The cap is only a safety limit, meant to be above any rate
   * this machine reaches: the bare relay's ramp goes on until it fails (issue "Capacity, the last mile"), so the
   * ratio is not capped. The first round must be able to bracket the answer from `start` by doubling (40/s → 2560/s is
   * 7 probes, 3200/s the 8th).
   */
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
  /** h. simultaneous streams, as d at a larger size */
  burstHuge: { streams: number; deadlineMs: number };
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
   * Safety net for the time limit (17 minutes full): a round is not started when the time since the start
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
    cap: 3_200,
    floor: 2,
    precision: 1.1,
    maxProbes: 9,
    maxProbesLater: 4,
    maxStartMs: 1_000,
    deadlineMs: 15_000,
  },
  burstSmall: { streams: 200, deadlineMs: 12_000 },
  burstLarge: { streams: 1_000, deadlineMs: 12_000 },
  // 3,000 streams of 5 s (50 tokens at 10/s) on 2 cores: 20 s is a measurement, not a free pass (unfinished = error).
  burstHuge: { streams: 3_000, deadlineMs: 20_000 },
  overload: { streams: 5_000, fastRefusalMs: 1_000, deadlineMs: 15_000 },
  requestRate: { connections: 50, warmupMs: 1_000, durationMs: 5_000 },
  replay: { requests: 200 },
  settle: { cpuPercent: 5, windowMs: 1_000, maxWaitMs: 6_000 },
  budgetMs: 16.25 * 60_000,
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
    maxProbes: 8,
    maxProbesLater: 4,
  },
  burstSmall: { streams: 100, deadlineMs: 12_000 },
  burstLarge: { streams: 300, deadlineMs: 12_000 },
  burstHuge: { streams: 1_000, deadlineMs: 20_000 },
  overload: { streams: 1_000, fastRefusalMs: 1_000, deadlineMs: 15_000 },
  requestRate: { connections: 50, warmupMs: 500, durationMs: 2_000 },
  replay: { requests: 100 },
  settle: { cpuPercent: 5, windowMs: 500, maxWaitMs: 6_000 },
  budgetMs: 8 * 60_000,
};
