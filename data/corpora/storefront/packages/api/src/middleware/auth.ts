import type { NextFunction, Request, Response } from 'express';
import { createLogger } from '@acme/logger';

const log = createLogger('auth');

export interface SessionClaims {
  sub: string;
  exp: number;
  roles: string[];
}

function decodeSession(token: string): SessionClaims | undefined {
  try {
    const payload = Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8');
    return JSON.parse(payload) as SessionClaims;
  } catch {
    return undefined;
  }
}

export function requireSession(req: Request, res: Response, next: NextFunction): void {
  const header = req.get('authorization') ?? '';
  const token = header.startsWith('Bearer ') ? header.slice(7) : '';
  const claims = token ? decodeSession(token) : undefined;
  if (!claims || claims.exp * 1000 < Date.now()) {
    log.warn('rejected request without a valid session', { path: req.path });
    res.status(401).json({ error: 'sign in first' });
    return;
  }
  res.locals.userId = claims.sub;
  res.locals.roles = claims.roles;
  next();
}
