// The machine-readable report of one test/run-tier.ts process: a node:test reporter that writes one
// JSON line per finished test (its name, file and nesting, whether it failed, was skipped or todo)
// and per top-level diagnostic (the run's summary: "tests N", "pass N", "fail N", "cancelled N", …).
// The runner reads it after the process ended and trusts the process only when the summary is
// there and says every test passed: the exit status alone can be 0 after process.exit(0) or
// `process.exitCode = 0` in a test file.
interface TestEvent {
  type: string;
  data: { name?: string; file?: string; nesting?: number; message?: string; skip?: unknown; todo?: unknown };
}

export default async function* tierReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  for await (const { type, data } of source) {
    if (type === 'test:pass' || type === 'test:fail') {
      yield `${JSON.stringify({
        type: type === 'test:pass' ? 'pass' : 'fail',
        name: data.name,
        file: data.file,
        nesting: data.nesting,
        skip: data.skip !== undefined && data.skip !== false,
        todo: data.todo !== undefined && data.todo !== false,
      })}\n`;
    } else if (type === 'test:diagnostic' && data.nesting === 0) {
      yield `${JSON.stringify({ type: 'diagnostic', message: data.message })}\n`;
    }
  }
}
