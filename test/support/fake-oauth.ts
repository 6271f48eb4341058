import { createHash, randomBytes } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer, readBody } from './loopback-server';

export interface FakeAccount {
  id: string;
  email: string | null;
  verified: boolean;
}

interface Grant {
  account: FakeAccount;
  clientId: string;
  redirectUri: string;
  codeChallenge?: string;
}

export const CLIENT_ID = 'test-client-id';
export const CLIENT_SECRET = 'test-client-secret';

/**
 * One OAuth 2.0 provider on loopback speaking the real wire protocol: form-encoded token requests with
 * client credentials (and PKCE when the authorization carried a challenge), bearer-token profile calls in
 * Google's (OIDC userinfo) or GitHub's (/user + /user/emails) shape. `approve` plays the user consenting.
 */
export class FakeOAuthProvider extends LoopbackServer {
  private readonly grants = new Map<string, Grant>();
  private readonly tokens = new Map<string, FakeAccount>();
  readonly tokenRequests: URLSearchParams[] = [];
  /** Misbehaviour by path: 'hang' never answers; a string is answered as the 200 body, as it is. */
  readonly faults = new Map<string, string>();

  constructor(private readonly kind: 'google' | 'github') {
    super();
  }

  env(prefix: 'GOOGLE' | 'GITHUB'): Record<string, string> {
    return {
      [`${prefix}_CLIENT_ID`]: CLIENT_ID,
      [`${prefix}_CLIENT_SECRET`]: CLIENT_SECRET,
      [`${prefix}_AUTHORIZATION_URL`]: `${this.baseUrl}/authorize`,
      [`${prefix}_TOKEN_URL`]: `${this.baseUrl}/token`,
      [`${prefix}_USERINFO_URL`]: `${this.baseUrl}/${this.kind === 'google' ? 'userinfo' : 'user'}`,
      ...(prefix === 'GITHUB'
        ? { GITHUB_EMAILS_URL: `${this.baseUrl}/user/emails` }
        : {}),
    };
  }

  /** The user approves the authorization request our service redirected to: answers the code. */
  approve(authorizationUrl: string, account: FakeAccount): string {
    const url = new URL(authorizationUrl);
    const code = randomBytes(16).toString('hex');
    this.grants.set(code, {
      account,
      clientId: url.searchParams.get('client_id') ?? '',
      redirectUri: url.searchParams.get('redirect_uri') ?? '',
      codeChallenge: url.searchParams.get('code_challenge') ?? undefined,
    });
    return code;
  }

  protected async handle(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const fault = this.faults.get(url.pathname);
    if (fault === 'hang') return;
    if (fault !== undefined)
      return void res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(fault);
    if (req.method === 'POST' && url.pathname === '/token')
      return this.token(new URLSearchParams(await readBody(req)), res);
    const account = this.tokens.get(
      (req.headers.authorization ?? '').replace(/^Bearer /, ''),
    );
    if (!account) return json(res, 401, { error: 'invalid_token' });
    if (url.pathname === '/userinfo')
      return json(res, 200, {
        sub: account.id,
        email: account.email,
        email_verified: account.verified,
      });
    if (url.pathname === '/user')
      return json(res, 200, {
        id: Number(account.id),
        login: `user${account.id}`,
        email: account.email,
      });
    if (url.pathname === '/user/emails')
      return json(
        res,
        200,
        account.email
          ? [
              {
                email: account.email,
                primary: true,
                verified: account.verified,
              },
            ]
          : [],
      );
    json(res, 404, { error: 'not_found' });
  }

  private token(form: URLSearchParams, res: ServerResponse): void {
    this.tokenRequests.push(form);
    const grant = this.grants.get(form.get('code') ?? '');
    if (
      !grant ||
      form.get('client_id') !== CLIENT_ID ||
      form.get('client_secret') !== CLIENT_SECRET ||
      form.get('redirect_uri') !== grant.redirectUri
    ) {
      return json(res, 400, { error: 'invalid_grant' });
    }
    if (
      grant.codeChallenge &&
      createHash('sha256')
        .update(form.get('code_verifier') ?? '')
        .digest('base64url') !== grant.codeChallenge
    ) {
      return json(res, 400, {
        error: 'invalid_grant',
        error_description: 'PKCE verification failed',
      });
    }
    this.grants.delete(form.get('code')!);
    const accessToken = randomBytes(16).toString('hex');
    this.tokens.set(accessToken, grant.account);
    json(res, 200, { access_token: accessToken, token_type: 'bearer' });
  }
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res
    .writeHead(status, { 'Content-Type': 'application/json' })
    .end(JSON.stringify(body));
}
