// The floor of rc1-build's guarantees on a machine, for bench/floor.ts: the least file work a
// build of the bench graph (bench/graph-workspace.ts) must do to keep each guarantee, in plain
// Node.js with nothing else — no pipeline to compile or check, no fingerprints of rule code or
// params, no scheduler beyond a ready queue, no events, no console. A Node.js engine that keeps
// the guarantees with the same files (an output renamed into place, an entry, a sidecar) does
// at least this work: where this program misses a goal, such an engine cannot meet it here.
//
//   node bench/floor-build.mjs LEVEL GRAPH_JSON            a build from clean in the current folder
//   node bench/floor-build.mjs serve GRAPH_JSON SOCKET     a full build, then a resident server that
//                                                          rebuilds what changed for each client
//   node bench/floor-build.mjs client SOCKET               one served build; exits when it is done
//
// LEVEL, each one the one before plus:
//   plain    — two worker threads run the targets (read the inputs, write the output in place):
//              what ninja does with two processes per target, in Node.js
//   atomic   — the output is written under a temporary name and renamed into place (a killed build
//              never leaves half an output), its sha256 is taken, one trace line is written per
//              target; nothing is synced (rules that ran for less than 1 s in all: rc1-build leaves
//              their outputs to the kernel's write-back and marks its records for this boot only)
//   cache    — one cache entry per target (a file, written under a temporary name and renamed; an
//              output of at most 64 KiB inline in it as base64, a larger one as an object file of
//              its own), so that a revert is restored without running the rule
//   sidecar  — one `sha256sum -c` sidecar per artifact and a manifest of every artifact (JSON)
//
// The served build stats every source and output (the up-to-date check), hashes a source whose
// (size, mtime) changed, rebuilds the targets downstream of a changed hash on the server's main
// thread, layer by layer, with the work of `sidecar` (a rewritten sidecar goes under a temporary
// name and is renamed, the manifest is rewritten whole and fsynced; the outputs are not synced:
// quick rules, as in rc1-build), and answers the client with the targets it re-ran and its own time.
//
// Environment: FLOOR_WORKERS (default 2) worker threads for a full build; FLOOR_TIMING=1 prints
// the served build's split (rebuild, then making it durable) on stderr.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const INLINE_MAX = 64 * 1024;
const LEVELS = ['plain', 'atomic', 'cache', 'sidecar'];
const STATE = '.floor';

const sha256 = (b) => createHash('sha256').update(b).digest('hex');
const concatInputs = (t) => Buffer.concat([...t.inputs.map((p) => fs.readFileSync(p)), Buffer.from(`${t.name}\n`)]);

/** Runs one target at `level`; returns the output's sha256 (or '' at plain) and size. */
function runTarget(t, level, seq) {
  const bytes = concatInputs(t);
  if (level === 0) {
    fs.writeFileSync(t.output, bytes);
    return { sha: '', size: bytes.length };
  }
  const tmp = `${STATE}/tmp/${seq}`;
  fs.writeFileSync(tmp, bytes);
  const sha = sha256(bytes);
  fs.renameSync(tmp, t.output);
  if (level >= 2) {
    const entry = { target: t.name, outputs: { [t.output]: sha } };
    if (bytes.length <= INLINE_MAX) entry.inline = { [t.output]: bytes.toString('base64') };
    else {
      const obj = `${STATE}/objects/${sha}`;
      const fd = fs.openSync(obj, 'wx', 0o444);
      fs.writeSync(fd, bytes);
      fs.closeSync(fd);
    }
    const etmp = `${STATE}/tmp/e${seq}`;
    fs.writeFileSync(etmp, JSON.stringify(entry));
    fs.renameSync(etmp, `${STATE}/entries/${t.name}`);
  }
  return { sha, size: bytes.length };
}

const sidecarPath = (output) => `reports/sha256/${output}.sha256`;
const sidecarText = (output, sha) => `${sha}  ${output}\n`;

/** Every artifact: its path, sha256, size, the target that made it and its inputs with their sha256. */
function manifestText(graph, shas, sizes, sourceSha) {
  const shaOf = (p) => sourceSha.get(p) ?? shas.get(path.basename(p, '.txt'));
  const artifacts = graph.map((t) => ({
    path: t.output,
    sha256: shas.get(t.name),
    size: sizes.get(t.name),
    target: t.name,
    inputs: t.inputs.map((p) => ({ path: p, sha256: shaOf(p) })),
  }));
  return `${JSON.stringify({ artifacts }, null, 2)}\n`;
}

function writeDurably(file, text) {
  const tmp = `${file}.tmp`;
  const fd = fs.openSync(tmp, 'w');
  fs.writeSync(fd, text);
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
}

function prepareState(graph, level) {
  fs.mkdirSync('out', { recursive: true });
  if (level >= 1) fs.mkdirSync(`${STATE}/tmp`, { recursive: true });
  if (level >= 2) {
    fs.mkdirSync(`${STATE}/entries`, { recursive: true });
    fs.mkdirSync(`${STATE}/objects`, { recursive: true });
  }
  if (level >= 3) fs.mkdirSync('reports/sha256/out', { recursive: true });
  return graph;
}

/** A full build from clean on two worker threads; resolves to each target's output sha256. */
function fullBuild(graph, level) {
  prepareState(graph, level);
  const byName = new Map(graph.map((t) => [t.name, t]));
  const waiting = new Map(graph.map((t) => [t.name, t.deps.length]));
  const dependents = new Map(graph.map((t) => [t.name, []]));
  for (const t of graph) for (const d of t.deps) dependents.get(d).push(t.name);
  const ready = graph.filter((t) => t.deps.length === 0).map((t) => t.name);
  const shas = new Map();
  const sizes = new Map();
  const sourceSha = new Map();
  if (level >= 1) for (const t of graph) if (t.source) sourceSha.set(t.source, sha256(fs.readFileSync(t.source)));
  const trace = level >= 1 ? fs.openSync(`${STATE}/trace.jsonl`, 'a') : -1;
  const workers = Array.from(
    { length: Number(process.env.FLOOR_WORKERS ?? 2) },
    () => new Worker(new URL(import.meta.url), { workerData: { level } }),
  );
  let seq = 0;
  let done = 0;
  return new Promise((resolve, reject) => {
    const feed = (w) => {
      const name = ready.shift();
      if (name === undefined) {
        w.idle = true;
        return;
      }
      w.idle = false;
      w.postMessage({ t: byName.get(name), seq: seq++ });
    };
    for (const w of workers) {
      w.on('error', reject);
      w.on('message', ({ name, sha, size }) => {
        shas.set(name, sha);
        sizes.set(name, size);
        if (trace >= 0) fs.writeSync(trace, `${JSON.stringify({ target: name, sha256: sha })}\n`);
        done += 1;
        for (const d of dependents.get(name)) {
          const n = waiting.get(d) - 1;
          waiting.set(d, n);
          if (n === 0) ready.push(d);
        }
        if (done === graph.length) {
          for (const x of workers) x.terminate();
          if (trace >= 0) fs.closeSync(trace);
          resolve();
          return;
        }
        feed(w);
        for (const x of workers) if (x.idle && ready.length > 0) feed(x);
      });
      feed(w);
    }
  }).then(() => {
    if (level >= 3) {
      for (const t of graph) {
        const fd = fs.openSync(sidecarPath(t.output), 'wx');
        fs.writeSync(fd, sidecarText(t.output, shas.get(t.name)));
        fs.closeSync(fd);
      }
      writeDurably('reports/manifest.json', manifestText(graph, shas, sizes, sourceSha));
    }
    return { shas, sizes, sourceSha };
  });
}

function serve(graph, socket) {
  return fullBuild(graph, 3).then(({ shas, sizes, sourceSha }) => {
    const stats = new Map();
    const key = (st) => `${st.size}:${st.mtimeMs}`;
    for (const t of graph) {
      for (const p of [...t.inputs, t.output]) stats.set(p, key(fs.statSync(p)));
    }
    let seq = 1_000_000;
    const trace = fs.openSync(`${STATE}/trace.jsonl`, 'a');
    const server = net.createServer((conn) => {
      conn.once('data', () => {
        const t0 = performance.now();
        // The up-to-date check: a stat of every source and output.
        const changed = new Set();
        for (const [p, k] of stats) {
          const st = fs.statSync(p);
          if (key(st) === k) continue;
          stats.set(p, key(st));
          if (p.startsWith('src/')) {
            const sha = sha256(fs.readFileSync(p));
            if (sha !== sourceSha.get(p)) {
              sourceSha.set(p, sha);
              changed.add(p);
            }
          }
        }
        // Rebuild downstream of a changed source, in layer order (the graph is in layer order).
        const rebuilt = [];
        const names = new Set();
        for (const t of graph) {
          if (!(t.source && changed.has(t.source)) && !t.deps.some((d) => names.has(d))) continue;
          const r = runTarget(t, 2, seq++);
          shas.set(t.name, r.sha);
          sizes.set(t.name, r.size);
          fs.writeSync(trace, `${JSON.stringify({ target: t.name, sha256: r.sha })}\n`);
          stats.set(t.output, key(fs.statSync(t.output)));
          rebuilt.push(t);
          names.add(t.name);
        }
        if (rebuilt.length > 0) {
          for (const t of rebuilt) {
            const file = sidecarPath(t.output);
            fs.writeFileSync(`${file}.tmp`, sidecarText(t.output, shas.get(t.name)));
            fs.renameSync(`${file}.tmp`, file);
          }
          const t1 = performance.now();
          writeDurably('reports/manifest.json', manifestText(graph, shas, sizes, sourceSha));
          if (process.env.FLOOR_TIMING)
            process.stderr.write(`rebuild ${(t1 - t0).toFixed(1)} durable ${(performance.now() - t1).toFixed(1)}\n`);
        }
        conn.end(`ok ${rebuilt.length} ${(performance.now() - t0).toFixed(1)}\n`);
      });
    });
    fs.rmSync(socket, { force: true });
    server.listen(socket, () => process.stdout.write('listening\n'));
  });
}

if (!isMainThread) {
  const { level } = workerData;
  parentPort.on('message', ({ t, seq }) => parentPort.postMessage({ name: t.name, ...runTarget(t, level, seq) }));
} else {
  const [mode, a, b] = process.argv.slice(2);
  if (mode === 'client') {
    const conn = net.connect(a, () => conn.write('build\n'));
    let reply = '';
    conn.on('data', (d) => {
      reply += d;
    });
    conn.on('end', () => {
      if (!reply.startsWith('ok ')) process.exit(1);
      process.stdout.write(reply);
    });
  } else if (mode === 'serve') {
    serve(JSON.parse(fs.readFileSync(a, 'utf8')), path.resolve(b));
  } else {
    const level = LEVELS.indexOf(mode);
    if (level === -1 || !a) {
      process.stderr.write(`usage: node bench/floor-build.mjs ${LEVELS.join('|')} GRAPH_JSON\n`);
      process.exit(2);
    }
    fullBuild(JSON.parse(fs.readFileSync(a, 'utf8')), level);
  }
}
