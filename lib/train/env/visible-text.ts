// The fixed texts the environment shows the agent (user replies, tool errors) and the shape of one
// visible event. Apart from dialogue-env.ts so that the observation features (features.ts) can
// read them without importing the environment that imports them.
export const GENERIC_ASK = 'Could you tell me a bit more about what you need?';
export const NOTHING_TO_ADD = 'There is nothing to add: everything is in my question.';
export const VAGUE_REPLY = 'Hmm, I am not sure how to put it. The usual one, I guess?';
export const TIMEOUT = 'error: the service timed out; try again';
export const CALC_ERROR = 'error: could not evaluate the expression';
export const NO_ARTICLE = 'No further article found.';

/** One thing the agent saw after an action: the user's reply or the tool's output, as text. */
export interface VisibleEvent {
  action: 'ask' | 'wiki' | 'calc';
  text: string;
  title?: string;
}
