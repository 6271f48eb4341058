import http from 'node:http';
import https from 'node:https';
import { OAuth2 } from 'oauth';

type Callback = (
  err: unknown,
  body?: string | Buffer,
  res?: http.IncomingMessage,
) => void;

/** The parts of node-oauth's OAuth2 client (the HTTP client of passport-oauth2) extended here. */
interface OAuth2Internals {
  _chooseHttpLibrary(url: { protocol?: string | null }): {
    request: (options: http.RequestOptions) => http.ClientRequest;
  };
  get(url: string, accessToken: string, callback: Callback): void;
}

class ProviderAnswerError extends Error {}

/**
 * Bounds what passport's OAuth client does with a provider:
 * - every call (token, profile, emails) ends within `timeoutMs`, so a provider that does not answer fails
 *   the sign-in instead of holding the request;
 * - the access token goes in an `Authorization: Bearer` header (RFC 6750), never in the URL, where
 *   passport-google-oauth20 would otherwise put it;
 * - a profile answer must be a JSON object (an array for `arrayUrls`): the strategies parse it inside an
 *   I/O callback, where a throw on an unexpected shape would end the process.
 */
export function boundOAuthClient(
  client: OAuth2,
  timeoutMs: number,
  arrayUrls: string[] = [],
): void {
  client.useAuthorizationHeaderforGET(true);
  const internals = client as unknown as OAuth2Internals;
  internals._chooseHttpLibrary = (url) => {
    const library = url.protocol === 'https:' ? https : http;
    return {
      request: (options) => withDeadline(library.request(options), timeoutMs),
    };
  };
  const get = internals.get.bind(client);
  internals.get = (url, accessToken, callback) =>
    get(url, accessToken, (err, body, res) => {
      if (err) return callback(err, body, res);
      const shape = arrayUrls.includes(url) ? 'array' : 'object';
      if (!isJson(body, shape))
        return callback(
          new ProviderAnswerError(
            `${new URL(url).pathname} did not answer a JSON ${shape}`,
          ),
        );
      callback(null, body, res);
    });
}

function withDeadline(
  request: http.ClientRequest,
  timeoutMs: number,
): http.ClientRequest {
  const timer = setTimeout(
    () =>
      request.destroy(
        new ProviderAnswerError(`no answer within ${timeoutMs} ms`),
      ),
    timeoutMs,
  );
  request.once('close', () => clearTimeout(timer));
  return request;
}

function isJson(
  body: string | Buffer | undefined,
  shape: 'object' | 'array',
): boolean {
  try {
    const value: unknown = JSON.parse(String(body));
    return shape === 'array'
      ? Array.isArray(value)
      : typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
