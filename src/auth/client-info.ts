import { Request } from 'express';
import { ClientInfo } from './auth.service';

/** What a new session records of the client: its user agent and address (TRUST_PROXY decides req.ip). */
export function clientInfo(req: Request): ClientInfo {
  const userAgent = req.headers['user-agent'];
  return {
    userAgent: typeof userAgent === 'string' ? userAgent : undefined,
    ip: req.ip,
  };
}
