// The CLI's stdout and stderr when their reader goes away: `rc1-build status | head -1` closes
// the pipe after one line, and the next write fails with EPIPE (an 'error' event that would
// otherwise end the process with a stack). A closed stream is marked and later writes to it are
// dropped, so the command finishes as it would have — a build keeps building, records its
// outputs and releases its lock — just without printing.
interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  tty: boolean;
}

function quiet(stream: NodeJS.WriteStream): (s: string) => void {
  let closed = false;
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') {
      closed = true;
      return;
    }
    throw e;
  });
  return (s) => {
    if (closed || stream.destroyed) return;
    try {
      stream.write(s);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPIPE') closed = true;
      else throw e;
    }
  };
}

let io: Io | null = null;

/** The process's stdio for the CLI, tolerant of a closed reader. */
export function processIo(): Io {
  io ??= { out: quiet(process.stdout), err: quiet(process.stderr), tty: process.stderr.isTTY === true };
  return io;
}

/** An Io whose stdout lines are gathered and written together (coalescedIo). */
export interface CoalescedIo extends Io {
  /** Writes what is gathered now. */
  flush(): void;
}

/** Gathered stdout is written once it reaches this many characters, else at the next turn. */
const COALESCE_CHARS = 16 * 1024;

/**
 * A build's stdout, written in batches: a build prints a line or two per target (`run`, `done`),
 * and one write per line was ~2 000 write system calls and ~30 ms of the main thread on the
 * 1 000-target graph. Lines are gathered and written together at the end of the event loop's
 * turn (setImmediate), at COALESCE_CHARS, before anything goes to stderr (so the two streams
 * keep their order on a terminal or a shared pipe), at flush(), and when the process exits. A
 * line is only ever written late by one turn, never early, and never lost but to SIGKILL.
 */
export function coalescedIo(io: Io): CoalescedIo {
  let pending = '';
  let scheduled = false;
  const flush = (): void => {
    if (pending === '') return;
    const s = pending;
    pending = '';
    io.out(s);
  };
  const onTurn = (): void => {
    scheduled = false;
    flush();
  };
  return {
    tty: io.tty,
    out: (s) => {
      pending += s;
      if (pending.length >= COALESCE_CHARS) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(onTurn);
      }
    },
    err: (s) => {
      flush();
      io.err(s);
    },
    flush,
  };
}

/** The batched outputs of the builds in progress, written when the process exits. */
const open = new Set<CoalescedIo>();
let exitHook = false;

/**
 * Writes what `io` holds if the process exits before it is flushed (a signal's handler, a
 * process.exit anywhere); returns the function that ends this. One 'exit' listener serves every
 * build of the process (the resident server runs many, some waiting on the lock at once).
 */
export function flushOnExit(io: CoalescedIo): () => void {
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const x of open) x.flush();
    });
  }
  open.add(io);
  return () => {
    open.delete(io);
  };
}
