// An API key refused by a service (HTTP 401 or 403). The scoring and policy clients stop calling
// a service after AUTH_FAILURES_TO_STOP refusals in a row and throw this: the rule fails at once
// with one message naming the environment variable that holds the key — never its value — instead
// of asking for every remaining item. An expected error: the rule worker prints its message alone (no stack).
import { ExpectedError } from './expected-error.ts';

export const AUTH_FAILURES_TO_STOP = 3;

export class AuthError extends ExpectedError {
  override name = 'AuthError';
  constructor(
    readonly service: string,
    readonly keyEnv: string,
    keySent: boolean,
    readonly status: number,
    readonly refusals: number,
    detail: string,
  ) {
    const where = keySent
      ? `the API key in $${keyEnv}`
      : `the request: no API key was sent ($${keyEnv} is empty or not set)`;
    const fix = keySent
      ? `check the value of ${keyEnv} (and that the config names the right variable); nothing more was sent`
      : `set ${keyEnv}; nothing more was sent`;
    super(
      `${service} refused ${where}: HTTP ${status}${refusals > 1 ? ` on ${refusals} calls in a row` : ''} (${detail}); ${fix}`,
    );
  }
}

/** Whether an HTTP status means the credentials were refused. */
export function isAuthStatus(status: number): boolean {
  return status === 401 || status === 403;
}
