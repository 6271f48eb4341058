import { Injectable } from '@nestjs/common';
import { RunStore } from '../run-store';
import { LeaseKeeper } from '../lease-keeper';
import { LiveStreams } from '../live/live-streams';

/**
 * Stopping runs wherever they are generated. The stop is written on the request first (so it outlives a
 * lost message: the instance generating the run reads it at its next lease renewal), then the run is
 * aborted here if it runs here, else the other instances are told through Redis.
 * docs/adr/0034-stopping-a-run.md
 */
@Injectable()
export class RunStops {
  private readonly local = new Map<string, AbortController>();

  constructor(
    private readonly runs: RunStore,
    private readonly live: LiveStreams,
    leases: LeaseKeeper,
  ) {
    live.onStopAsked((runId) => this.stopHere(runId));
    leases.onStopRequested((runIds) =>
      runIds.forEach((runId) => this.stopHere(runId)),
    );
  }

  /** A run generated here, stoppable from now until `release`: its signal aborts on a stop. */
  register(runId: string): AbortSignal {
    const controller = new AbortController();
    this.local.set(runId, controller);
    return controller.signal;
  }

  release(runId: string): void {
    this.local.delete(runId);
  }

  /** Asks for these runs to stop; the ones already finished are left as they are. */
  async stop(runIds: string[]): Promise<void> {
    if (runIds.length === 0) return;
    await this.runs.markStopRequested(runIds);
    for (const runId of runIds)
      if (!this.stopHere(runId)) this.live.askToStop(runId);
  }

  /** True when the run was generated here (and is now stopping). */
  private stopHere(runId: string): boolean {
    const controller = this.local.get(runId);
    controller?.abort();
    return controller !== undefined;
  }
}
