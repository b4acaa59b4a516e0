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
