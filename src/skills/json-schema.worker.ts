import { parentPort } from 'node:worker_threads';
import { schemaProblems, valueProblems } from './json-schema';
import type { SchemaJob } from './json-schema.service';

/** Runs untrusted JSON Schema work away from the event loop; the parent enforces time and memory limits. */
const port = parentPort;
if (port) {
  port.on('message', (job: SchemaJob) => {
    try {
      const problems =
        job.op === 'check'
          ? schemaProblems(job.field, job.schema)
          : valueProblems(job.field, job.schema, job.value, job.cacheKey);
      port.postMessage({ type: 'result', problems });
    } catch (error) {
      port.postMessage({
        type: 'result',
        problems: [
          {
            field: job.field,
            code: 'invalid_json_schema',
            message: `${job.field} cannot be checked (${error instanceof Error ? error.name : 'error'})`,
          },
        ],
      });
    }
  });
  port.postMessage({ type: 'ready' });
}
