/** How far an upload has gone: bytes sent of the request body, and its total when the browser knows it. */
export interface UploadProgress {
  loaded: number;
  total: number | null;
}

/** Statuses whose Response may not carry a body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for openapi-fetch's per-request `fetch` option that sends the request with XMLHttpRequest, the
 * one browser API that reports upload progress. Same origin and credentials as the request says; the
 * request's signal aborts it. Answers a Response like fetch does (a network failure rejects with a TypeError).
 */
export function fetchWithUploadProgress(
  onProgress: (progress: UploadProgress) => void,
): (request: Request) => Promise<Response> {
  return async (request: Request) => {
    const body =
      request.method === 'GET' || request.method === 'HEAD'
        ? null
        : await request.blob();
    return new Promise<Response>((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(request.method, request.url);
      xhr.withCredentials = request.credentials !== 'omit';
      xhr.responseType = 'blob';
      // Includes the multipart Content-Type with its boundary, which the Request derived from its FormData body.
      request.headers.forEach((value, name) =>
        xhr.setRequestHeader(name, value),
      );
      xhr.upload.onprogress = (event) =>
        onProgress({
          loaded: event.loaded,
          total: event.lengthComputable ? event.total : null,
        });
      xhr.onload = () => {
        const status = xhr.status;
        resolve(
          new Response(
            NULL_BODY_STATUSES.has(status) ? null : (xhr.response as Blob),
            {
              status,
              statusText: xhr.statusText,
              headers: headersOf(xhr.getAllResponseHeaders()),
            },
          ),
        );
      };
      xhr.onerror = () =>
        reject(new TypeError('The upload failed: network error.'));
      xhr.ontimeout = () => reject(new TypeError('The upload timed out.'));
      xhr.onabort = () =>
        reject(new DOMException('The upload was cancelled.', 'AbortError'));
      if (request.signal.aborted)
        return reject(
          new DOMException('The upload was cancelled.', 'AbortError'),
        );
      request.signal.addEventListener('abort', () => xhr.abort(), {
        once: true,
      });
      xhr.send(body);
    });
  };
}

function headersOf(raw: string): Headers {
  const headers = new Headers();
  for (const line of raw.trim().split(/[\r\n]+/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      // A header value the Headers class refuses is not one this client reads.
    }
  }
  return headers;
}
