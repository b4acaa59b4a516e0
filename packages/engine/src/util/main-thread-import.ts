// The resident server (src/server/) never runs the pipeline's own modules (rc1.build.ts, a rule
// read for its params schema) on its main thread: their top-level code would run in one
// request's environment and what it keeps (a secret read at load) would stay in the server's
// memory after it. Those imports call beforeMainThreadImport() first; during a served command it
// throws, before any output, and the client runs that command in-process (in a process that
// exits). The caches these imports fill make the next command served again.
let guard: ((what: string) => void) | null = null;

/** Set by the server for the length of one command; null in-process. */
export function setMainThreadImportGuard(g: ((what: string) => void) | null): void {
  guard = g;
}

export function beforeMainThreadImport(what: string): void {
  guard?.(what);
}
