// Hashing benchmark: the engine's file hasher (packages/engine/src/hash/hash-file.ts) against OpenSSL.
//   (a) one big file: hashFileSync in this process vs `openssl dgst -sha256 FILE` (a child).
//   (b) many 2 KiB files: hashFileSync in a loop, and split over 2 worker_threads, vs
//       `find | xargs -0 -P2 -n 500 openssl dgst -sha256` (a shell child).
// Also sweeps the read-buffer size and the small-file strategy, with the same read loop as the
// engine, so the constants in hash-file.ts can be re-checked on any machine.
// The variants live in bench/hash-variants.ts.
// Run: node --import tsx bench/hash.ts [--quick]   (--quick: 128 MiB and 3 000 files)
import { randomFillSync } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashFileSync } from '../packages/engine/src/hash/hash-file.ts';
import { exactSizeHash, HashPool, loopHash, streamHash, streamHashAll, writeWorker } from './hash-variants.ts';
import {
  fmtInt,
  fmtMs,
  hasFlag,
  loadNote,
  machineReport,
  runChildOk,
  summarize,
  table,
  timeAsync,
  timeSync,
  toolVersion,
  type Sample,
} from './util.ts';

const QUICK = hasFlag('--quick');
const MIB = 1024 * 1024;
const BIG_BYTES = (QUICK ? 128 : 1024) * MIB;
const BLOCK_BYTES = 16 * MIB;
const SMALL_FILES = QUICK ? 3_000 : 30_000;
const SMALL_BYTES = 2048;
const RUNS = 3;
const BIG_GOAL = 0.95; // engine throughput ≥ 0.95 × openssl's
const SMALL_GOAL = 1.5; // engine time ≤ 1.5 × the xargs pipeline's
const SWEEP_SIZES = [64 * 1024, 256 * 1024, MIB];

const mbps = (bytes: number, ms: number): number => bytes / 1e6 / (ms / 1000);
const filesPerS = (n: number, ms: number): number => n / (ms / 1000);
const sizeLabel = (bytes: number): string => (bytes >= MIB ? `${bytes / MIB} MiB` : `${bytes / 1024} KiB`);

// ------------------------------------------------------------------ fixtures

function writeBigFile(path: string): void {
  const block = randomFillSync(Buffer.allocUnsafe(BLOCK_BYTES));
  const fd = openSync(path, 'w');
  try {
    for (let written = 0; written < BIG_BYTES; written += BLOCK_BYTES) {
      block.writeUInt32LE(written / BLOCK_BYTES, 0); // no two blocks alike
      writeSync(fd, block);
    }
  } finally {
    closeSync(fd);
  }
}

function writeSmallFiles(dir: string): string[] {
  mkdirSync(dir);
  const bytes = randomFillSync(Buffer.allocUnsafe(SMALL_FILES * SMALL_BYTES));
  const paths: string[] = [];
  for (let i = 0; i < SMALL_FILES; i++) {
    const p = join(dir, `f_${String(i).padStart(5, '0')}.bin`);
    writeFileSync(p, bytes.subarray(i * SMALL_BYTES, (i + 1) * SMALL_BYTES));
    paths.push(p);
  }
  return paths;
}

// ------------------------------------------------------------------ baselines

function opensslDigest(stdout: string): string {
  const m = /=\s*([0-9a-f]{64})\s*$/.exec(stdout.trim());
  if (!m) throw new Error(`unexpected openssl output: ${stdout.slice(0, 200)}`);
  return m[1]!;
}

const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function xargsCommand(dir: string): string {
  return `find ${shellQuote(dir)} -type f -print0 | xargs -0 -P2 -n 500 openssl dgst -sha256 > /dev/null`;
}

// ------------------------------------------------------------------ measurement

interface Row {
  name: string;
  sample: Sample;
}

function expectAll(got: string[], want: string[], what: string): void {
  for (let i = 0; i < want.length; i++) {
    if (got[i] !== want[i]) throw new Error(`${what}: digest ${i} differs (${got[i]} vs ${want[i]})`);
  }
}

async function main(): Promise<void> {
  console.log(`# rc1-build hashing benchmark${QUICK ? ' (--quick)' : ''}\n`);
  console.log(machineReport());
  console.log(`${toolVersion('openssl', ['version'])}`);
  console.log(`runs: best (and median) of ${RUNS}, wall time, page cache warm; MB = 10^6 bytes\n`);

  const dir = mkdtempSync(join(tmpdir(), 'rc1-bench-hash-'));
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    // ---------------------------------------------------------------- (a) one big file
    const big = join(dir, 'big.bin');
    writeBigFile(big);
    const want = hashFileSync(big); // warm-up read: page cache and JIT
    if (opensslDigest(runChildOk('openssl', ['dgst', '-sha256', big]).stdout) !== want) {
      throw new Error('openssl and hashFileSync disagree on the big file');
    }
    const engineBig: number[] = [];
    const opensslBig: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      // interleaved, so drift hits both alike
      let got = '';
      engineBig.push(
        timeSync(() => {
          got = hashFileSync(big);
        }),
      );
      if (got !== want) throw new Error('hashFileSync gave two different digests for the big file');
      opensslBig.push(runChildOk('openssl', ['dgst', '-sha256', big]).ms);
    }
    const eBig = summarize(engineBig);
    const oBig = summarize(opensslBig);

    // ---------------------------------------------------------------- (b) many small files
    const smallDir = join(dir, 'small');
    const paths = writeSmallFiles(smallDir);
    const wantSmall = paths.map((p) => hashFileSync(p)); // warm-up: page cache, dentries, JIT
    const sampleOut = runChildOk('openssl', ['dgst', '-sha256', ...paths.slice(0, 20)])
      .stdout.trim()
      .split('\n');
    expectAll(sampleOut.map(opensslDigest), wantSmall.slice(0, 20), 'openssl vs hashFileSync (small files)');
    runChildOk('sh', ['-c', xargsCommand(smallDir)]); // warm-up for the baseline

    // One run of each approach per round, the baseline included, so drift hits them alike.
    const workerFile = writeWorker(dir);
    const pool = HashPool.start(workerFile, 2);
    expectAll(await pool.hashAll(paths), wantSmall, '2 worker_threads'); // warm the workers' JIT
    const singleRuns: number[] = [];
    const coldRuns: number[] = [];
    const warmRuns: number[] = [];
    const xargsRuns: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      let got: string[] = [];
      singleRuns.push(
        timeSync(() => {
          got = paths.map((p) => hashFileSync(p));
        }),
      );
      expectAll(got, wantSmall, 'hashFileSync loop');
      let cold: HashPool | undefined;
      coldRuns.push(
        await timeAsync(async () => {
          cold = HashPool.start(workerFile, 2);
          got = await cold.hashAll(paths);
        }),
      );
      await cold?.close();
      expectAll(got, wantSmall, '2 worker_threads');
      warmRuns.push(
        await timeAsync(async () => {
          got = await pool.hashAll(paths);
        }),
      );
      expectAll(got, wantSmall, '2 worker_threads (pool already running)');
      xargsRuns.push(runChildOk('sh', ['-c', xargsCommand(smallDir)]).ms);
    }
    await pool.close();
    const single = summarize(singleRuns);
    const xargs = summarize(xargsRuns);
    const nodeStart = summarize(Array.from({ length: RUNS }, () => runChildOk(process.execPath, ['-e', '0']).ms));

    // ---------------------------------------------------------------- results
    const bigRatio = mbps(BIG_BYTES, eBig.best) / mbps(BIG_BYTES, oBig.best);
    const bigCase = `${sizeLabel(BIG_BYTES)} file, MB/s`;
    const smallRows: Row[] = [
      { name: 'hashFileSync loop, 1 thread', sample: single },
      { name: '2 worker_threads, incl. starting them', sample: summarize(coldRuns) },
      { name: '2 worker_threads, pool already running', sample: summarize(warmRuns) },
    ];
    const rows: string[][] = [
      [
        bigCase,
        `${fmtInt(mbps(BIG_BYTES, eBig.best))} (${fmtMs(eBig.best)} ms)`,
        `openssl dgst: ${fmtInt(mbps(BIG_BYTES, oBig.best))} (${fmtMs(oBig.best)} ms)`,
        `${bigRatio.toFixed(2)}× throughput`,
        `≥ ${BIG_GOAL}×`,
        bigRatio >= BIG_GOAL ? 'yes' : 'NO',
      ],
      ...smallRows.map(({ name, sample }) => {
        const ratio = sample.best / xargs.best;
        return [
          `${fmtInt(SMALL_FILES)} × 2 KiB, files/s: ${name}`,
          `${fmtInt(filesPerS(SMALL_FILES, sample.best))} (${fmtMs(sample.best)} ms)`,
          `xargs -P2 openssl: ${fmtInt(filesPerS(SMALL_FILES, xargs.best))} (${fmtMs(xargs.best)} ms)`,
          `${ratio.toFixed(2)}× time`,
          `≤ ${SMALL_GOAL}× time`,
          ratio <= SMALL_GOAL ? 'yes' : 'NO',
        ];
      }),
    ];
    console.log(table(['case', 'rc1-build', 'baseline', 'ratio', 'goal', 'met'], rows));
    console.log('\nruns (ms):');
    console.log(
      `  hashFileSync ${sizeLabel(BIG_BYTES)}: ${eBig.runs.map(fmtMs).join(', ')} (median ${fmtMs(eBig.median)})`,
    );
    console.log(
      `  openssl dgst ${sizeLabel(BIG_BYTES)}: ${oBig.runs.map(fmtMs).join(', ')} (median ${fmtMs(oBig.median)})`,
    );
    for (const { name, sample } of smallRows) {
      console.log(`  ${name}: ${sample.runs.map(fmtMs).join(', ')} (median ${fmtMs(sample.median)})`);
    }
    console.log(`  find | xargs -P2 openssl: ${xargs.runs.map(fmtMs).join(', ')} (median ${fmtMs(xargs.median)})`);
    console.log(
      `  node -e 0 (startup, not in the in-process figures): ${nodeStart.runs.map(fmtMs).join(', ')} (median ${fmtMs(nodeStart.median)})`,
    );
    console.log(
      '  in-process figures are what the engine pays inside a build; the openssl figures include its process starts.',
    );

    // ---------------------------------------------------------------- buffer-size sweep
    console.log(`\n## read-buffer sweep (the engine's read loop; best of ${RUNS})\n`);
    // Every candidate is measured once per round, in a rotated order, so drift and JIT warm-up
    // hit all of them alike; each candidate is warmed up once before the first round.
    interface Candidate {
      label: string;
      column: 'big' | 'create' | 'oneShot';
      files: string[];
      fn: (p: string) => string;
      want: string[];
    }
    const candidates: Candidate[] = [];
    for (const size of SWEEP_SIZES) {
      const buf = Buffer.allocUnsafeSlow(size);
      const label = `${sizeLabel(size)} buffer`;
      candidates.push(
        { label, column: 'big', files: [big], fn: (p) => loopHash(p, buf, 'createHash'), want: [want] },
        { label, column: 'create', files: paths, fn: (p) => loopHash(p, buf, 'createHash'), want: wantSmall },
        { label, column: 'oneShot', files: paths, fn: (p) => loopHash(p, buf, 'fill+one-shot'), want: wantSmall },
      );
    }
    const shipped = 'hashFileSync (as shipped)';
    const exactLabel = 'fstat + one read of the file size';
    candidates.push(
      { label: exactLabel, column: 'oneShot', files: paths, fn: exactSizeHash, want: wantSmall },
      { label: shipped, column: 'big', files: [big], fn: hashFileSync, want: [want] },
      { label: shipped, column: 'oneShot', files: paths, fn: hashFileSync, want: wantSmall },
    );
    const times = candidates.map(() => [] as number[]);
    for (const c of candidates) expectAll(c.files.map(c.fn), c.want, `sweep ${c.label}`);
    for (let r = 0; r < RUNS; r++) {
      for (let k = 0; k < candidates.length; k++) {
        const i = (k + r) % candidates.length; // each round starts one candidate later
        const c = candidates[i]!;
        let got: string[] = [];
        times[i]!.push(
          timeSync(() => {
            got = c.files.map(c.fn);
          }),
        );
        expectAll(got, c.want, `sweep ${c.label}`);
      }
    }
    const labels = [...new Set(candidates.map((c) => c.label))];
    const sweepRows = labels.map((label) => {
      const cell = (column: Candidate['column']): string => {
        const i = candidates.findIndex((c) => c.label === label && c.column === column);
        if (i < 0) return '—';
        const best = summarize(times[i]!).best;
        return column === 'big' ? fmtInt(mbps(BIG_BYTES, best)) : fmtInt(filesPerS(SMALL_FILES, best));
      };
      return [label, cell('big'), cell('create'), cell('oneShot')];
    });
    console.log(
      table(
        [
          'read loop',
          `${sizeLabel(BIG_BYTES)} file, MB/s`,
          '2 KiB files/s, createHash/update/digest',
          '2 KiB files/s, fill buffer + one-shot crypto.hash',
        ],
        sweepRows,
      ),
    );

    // ---------------------------------------------------------------- streams
    console.log(`\n## why synchronous: fs.createReadStream + pipeline into a Hash (best of ${RUNS})\n`);
    const streamRows: string[][] = [];
    for (const hwm of [64 * 1024, 256 * 1024]) {
      const bigRuns: number[] = [];
      const smallRuns: number[] = [];
      for (let r = 0; r < RUNS; r++) {
        let got = '';
        bigRuns.push(
          await timeAsync(async () => {
            got = await streamHash(big, hwm);
          }),
        );
        if (got !== want) throw new Error('streamHash: big digest differs');
        let gotSmall: string[] = [];
        smallRuns.push(
          await timeAsync(async () => {
            gotSmall = await streamHashAll(paths, hwm, 16);
          }),
        );
        expectAll(gotSmall, wantSmall, 'streamHashAll');
      }
      const b = summarize(bigRuns).best;
      const sm = summarize(smallRuns).best;
      streamRows.push([
        `highWaterMark ${sizeLabel(hwm)}`,
        `${fmtInt(mbps(BIG_BYTES, b))} (${(b / eBig.best).toFixed(2)}× the sync time)`,
        `${fmtInt(filesPerS(SMALL_FILES, sm))} (${(sm / single.best).toFixed(1)}× the sync time)`,
      ]);
    }
    console.log(
      table(['stream', `${sizeLabel(BIG_BYTES)} file, MB/s`, '2 KiB files/s, 16 files in flight'], streamRows),
    );
    console.log(`\n${loadNote('at end')}`);
  } finally {
    cleanup();
  }
}

await main();
