// Picks the tfjs backend for the built-in engine and loads tfjs lazily (importing
// 'rc1-build/train' to load or evaluate a policy never loads tfjs). `auto` prefers the native
// bindings when a user has installed them — @tensorflow/tfjs-node-gpu, then @tensorflow/tfjs-node
// (not dependencies of rc1-build: they need a native build) — and otherwise runs the WebAssembly
// backend (@tensorflow/tfjs-backend-wasm), with the pure-JS `cpu` backend as the last resort.
// Determinism: the wasm backend is forced single-threaded (WASM_HAS_MULTITHREAD_SUPPORT false):
// one thread runs every kernel in a fixed order, so the same inputs give the same bits on every
// run — exact resume depends on it. SIMD stays on (deterministic on one thread). Native backends
// may use multi-threaded kernels whose reductions are not bit-reproducible: the log says so.
import type * as TfModule from '@tensorflow/tfjs';
import type { TrainConfig } from '../../config.ts';

export type Tf = typeof TfModule;

export interface TfHandle {
  tf: Tf;
  /** wasm | cpu | tfjs-node | tfjs-node-gpu */
  backend: string;
  /** Whether the run is bit-reproducible (and so exactly resumable) on this backend. */
  deterministic: boolean;
  /** One line for the log: backend, SIMD / threads, versions. */
  detail: string;
}

/** Imports a module by a name the bundler and type checker do not resolve (optional native backends). */
async function optionalImport(name: string): Promise<unknown> {
  try {
    return await import(name);
  } catch {
    return null;
  }
}

async function nativeBackend(pkg: '@tensorflow/tfjs-node-gpu' | '@tensorflow/tfjs-node'): Promise<TfHandle | null> {
  const mod = (await optionalImport(pkg)) as (Tf & { default?: Tf }) | null;
  if (!mod) return null;
  const tf = (mod.default ?? mod) as Tf;
  tf.enableProdMode();
  if (!(await tf.setBackend('tensorflow'))) return null;
  await tf.ready();
  const name = pkg === '@tensorflow/tfjs-node-gpu' ? 'tfjs-node-gpu' : 'tfjs-node';
  return {
    tf,
    backend: name,
    deterministic: false,
    detail: `${name} (native TensorFlow, tfjs ${tf.version_core}; multi-threaded kernels: not bit-reproducible across runs)`,
  };
}

async function jsBackend(which: 'wasm' | 'cpu'): Promise<TfHandle> {
  const tf = (await import('@tensorflow/tfjs')) as Tf;
  tf.enableProdMode();
  if (which === 'wasm') {
    await import('@tensorflow/tfjs-backend-wasm');
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  }
  if (!(await tf.setBackend(which))) throw new Error(`tfjs: the ${which} backend failed to initialise`);
  await tf.ready();
  const simd = which === 'wasm' ? Boolean(await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')) : false;
  const detail =
    which === 'wasm'
      ? `wasm (tfjs ${tf.version_core}, single-threaded${simd ? ', SIMD' : ''}: bit-reproducible)`
      : `cpu (tfjs ${tf.version_core}, pure JavaScript kernels: bit-reproducible)`;
  return { tf, backend: which, deterministic: true, detail };
}

export async function loadTf(choice: TrainConfig['tfjs']['backend']): Promise<TfHandle> {
  switch (choice) {
    case 'wasm':
    case 'cpu':
      return jsBackend(choice);
    case 'tfjs-node':
    case 'tfjs-node-gpu': {
      const h = await nativeBackend(`@tensorflow/${choice}`);
      if (!h)
        throw new Error(
          `train.tfjs.backend is ${choice}, but @tensorflow/${choice} cannot be imported here: install it (npm install @tensorflow/${choice}@4.22.0) or set train.tfjs.backend to auto or wasm`,
        );
      return h;
    }
    case 'auto': {
      const native =
        (await nativeBackend('@tensorflow/tfjs-node-gpu')) ?? (await nativeBackend('@tensorflow/tfjs-node'));
      if (native) return native;
      try {
        return await jsBackend('wasm');
      } catch {
        return jsBackend('cpu');
      }
    }
  }
}
