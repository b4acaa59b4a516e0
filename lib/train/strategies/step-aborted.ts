// Thrown by a strategy that sees the build's abort signal in the middle of a step: the engine
// then discards the partial step and checkpoints the last completed one (engines/tfjs/engine.ts).
export class StepAborted extends Error {
  override name = 'StepAborted';
  constructor() {
    super('the step was interrupted');
  }
}
