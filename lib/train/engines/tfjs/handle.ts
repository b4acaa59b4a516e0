// What the tfjs engine hands its strategy: tfjs itself, the trainable model (engines/tfjs/model.ts),
// the frozen reference policy's parameters (the policy at step 0, for the KL term), and a
// JavaScript copy of the current parameters for acting (mlp.ts forwardNet), refreshed by sync()
// after each step's updates, and the build's abort signal (strategies check it between
// minibatches and episodes, and throw StepAborted).
import type { NetShape, Params } from '../../mlp.ts';
import type { Tf } from './backend.ts';
import type { TfModel } from './model.ts';

export class TfjsModelHandle {
  private cached: Params;

  constructor(
    readonly tf: Tf,
    readonly model: TfModel,
    readonly reference: Params,
    readonly shape: NetShape,
    readonly signal: AbortSignal,
  ) {
    this.cached = model.params();
  }

  /** The current parameters (as of the last sync). */
  params(): Params {
    return this.cached;
  }

  /** Re-reads the parameters from the tfjs variables. */
  sync(): void {
    this.cached = this.model.params();
  }
}
