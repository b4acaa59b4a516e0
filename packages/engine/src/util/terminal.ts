// What the command's terminal is: whether stdout and stderr are terminals and how wide stderr is.
// In-process these are the process's own streams; a command run by the resident server
// (src/server/) answers with the client's, set for the length of that one request.
export interface Terminal {
  stdoutTTY: boolean;
  stderrTTY: boolean;
  columns(): number | undefined;
}

let served: Terminal | null = null;

/** Sets (or, with null, clears) the terminal of the command the server runs now. */
export function setServedTerminal(t: Terminal | null): void {
  served = t;
}

/** stdout as colourEnabled() reads it. */
export function stdoutStream(): { isTTY?: boolean } {
  return served ? { isTTY: served.stdoutTTY } : process.stdout;
}

/** stderr as colourEnabled() reads it. */
export function stderrStream(): { isTTY?: boolean } {
  return served ? { isTTY: served.stderrTTY } : process.stderr;
}

/** The width of stderr (the progress line), undefined when it is not a terminal. */
export function stderrColumns(): number | undefined {
  return served ? served.columns() : process.stderr.columns;
}
