// What a command run by the resident server (server.ts) gets instead of the process's signals
// and exit; small, so main.ts imports it without loading the server.
export type Sig = 'SIGINT' | 'SIGTERM';

export interface Served {
  /** Registers a handler of the request's SIGINT/SIGTERM (called at once if one came already); returns its removal. */
  onSignal(handler: (sig: Sig) => void): () => void;
  /** A rule worker started ahead by the server (fresh), if one is ready. */
  takeWorker(): import('node:worker_threads').Worker | undefined;
}

/** Thrown (before any output) by a command the server does not run: the client runs it in-process. */
export class NotServed extends Error {}
