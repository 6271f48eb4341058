/** The orchestrator's side of the load generator process: one job at a time over IPC, with a time limit. */
import {
  ChatJobResult,
  isObject,
  JobMessage,
  LoadJob,
  RateJobResult,
  ResultMessage,
} from './protocol';
import { forkHarness, HarnessChild, stopChild } from './children';

export class LoadGeneratorClient {
  private child: HarnessChild | undefined;
  private sequence = 0;

  constructor(
    private readonly compiledDir: string,
    private readonly logFd: number,
  ) {}

  async start(): Promise<void> {
    this.child = await forkHarness(
      this.compiledDir,
      'processes/load-generator.js',
      {},
      this.logFd,
    );
  }

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  async stop(): Promise<void> {
    if (this.child) await stopChild(this.child.child, 2_000);
    this.child = undefined;
  }

  async chat(
    job: Exclude<LoadJob, { kind: 'requestRate' }>,
    limitMs: number,
  ): Promise<ChatJobResult> {
    const result = await this.run(job, limitMs);
    if (result.kind !== 'chat')
      throw new Error(
        'the load generator answered a chat job with another kind of result',
      );
    return result;
  }

  async rate(
    job: Extract<LoadJob, { kind: 'requestRate' }>,
    limitMs: number,
  ): Promise<RateJobResult> {
    const result = await this.run(job, limitMs);
    if (result.kind !== 'rate')
      throw new Error(
        'the load generator answered a rate job with another kind of result',
      );
    return result;
  }

  /** Runs one job; past `limitMs` the generator is killed and restarted, and the job fails. */
  private async run(
    job: LoadJob,
    limitMs: number,
  ): Promise<ChatJobResult | RateJobResult> {
    if (!this.child) await this.start();
    const current = this.child;
    if (!current) throw new Error('no load generator');
    this.sequence += 1;
    const id = this.sequence;
    const message: JobMessage = { type: 'job', id, job };
    try {
      return await new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `the load generator did not finish the ${job.kind} job within ${limitMs} ms`,
              ),
            ),
          limitMs,
        );
        const onExit = () => {
          clearTimeout(timer);
          reject(new Error('the load generator exited during a job'));
        };
        const onMessage = (answer: unknown) => {
          if (!isResult(answer) || answer.id !== id) return;
          clearTimeout(timer);
          current.child.off('message', onMessage);
          current.child.off('exit', onExit);
          if (answer.result) resolve(answer.result);
          else
            reject(new Error(`load generator: ${answer.error ?? 'no result'}`));
        };
        current.child.on('message', onMessage);
        current.child.once('exit', onExit);
        current.child.send(message);
      });
    } catch (error) {
      await this.stop();
      throw error;
    }
  }
}

function isResult(message: unknown): message is ResultMessage {
  return (
    isObject(message) &&
    message.type === 'result' &&
    typeof message.id === 'number'
  );
}
