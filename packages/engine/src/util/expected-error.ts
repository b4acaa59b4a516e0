// The "expected error" marker: a failure of a rule that is the user's to fix (bad data or config,
// a refused mode, a refused API key), printed as its message alone, without a stack trace. The
// marker is a registered symbol (Symbol.for), not a class: a rule's code closure is bundled with
// its own copy of the public API, so `instanceof` across the engine and a rule cannot work, but
// the same registered symbol is seen by every copy. The engine never knows a pipeline's error
// classes by name.

/** The brand an expected error carries (true). Registered, so every bundled copy of the API agrees. */
export const EXPECTED_ERROR: unique symbol = Symbol.for('rc1-build.expected-error') as never;

/**
 * Base class of expected errors: a pipeline's own error classes (bad data, a bad template) extend
 * it, or mark their instances with expectedError().
 */
export class ExpectedError extends Error {
  override name = 'ExpectedError';
}
Object.defineProperty(ExpectedError.prototype, EXPECTED_ERROR, { value: true });

/** Mark an error (any Error, e.g. one a library threw) as expected; returns it, for `throw expectedError(e)`. */
export function expectedError<E extends Error>(e: E): E {
  Object.defineProperty(e, EXPECTED_ERROR, { value: true, configurable: true });
  return e;
}

/** Whether an error carries the expected-error marker (from any copy of the API). */
export function isExpectedError(e: unknown): boolean {
  return typeof e === 'object' && e !== null && (e as { [EXPECTED_ERROR]?: unknown })[EXPECTED_ERROR] === true;
}
