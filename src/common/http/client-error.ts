import { randomUUID } from 'node:crypto';
import { Server, STATUS_CODES } from 'node:http';
import { Duplex } from 'node:stream';
import { ErrorCode } from '../errors/error-codes';
import { buildProblem, PROBLEM_CONTENT_TYPE } from '../errors/problem-details';
import { Logger } from '../logging/logger';
import { REQUEST_ID_HEADER } from './http-logger';

/**
 * Requests Node's HTTP parser rejects before Express sees them (oversized headers, garbage request
 * lines, conflicting Content-Length/Transfer-Encoding) still get a problem+json answer with a request id.
 */
export function answerClientErrorsWithProblems(
  server: Server,
  log: Logger,
): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, code, detail } = classify(error.code);
    const requestId = randomUUID();
    const body = JSON.stringify(
      buildProblem({ code, status, detail, requestId }),
    );
    log.info(
      { requestId, status, parserError: error.code },
      'malformed http request',
    );
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `${REQUEST_ID_HEADER}: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}

function classify(parserCode: string | undefined): {
  status: number;
  code: ErrorCode;
  detail: string;
} {
  if (parserCode === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      code: 'request_header_too_large',
      detail: 'The request headers are too large.',
    };
  }
  if (parserCode === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      status: 408,
      code: 'request_timeout',
      detail: 'The request was not received in time.',
    };
  }
  return {
    status: 400,
    code: 'bad_request',
    detail: 'The HTTP request is malformed.',
  };
}
