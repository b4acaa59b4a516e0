// The fixed texts the environment shows the agent (user replies, tool errors) and the shape of one
// visible event. Apart from dialogue-env.ts so that the observation features (features.ts) can
// read them without importing the environment that imports them.
//
// The user's replies are drawn (seeded) from lists written to read like real users, not to be
// recognisable: a vague reply may be long, carry content words and even a name ("My colleague
// Dana…"), so its usefulness cannot be read off its length or its new words; a reply that does
// give the detail is sometimes wrapped in a sentence of chat around it; "nothing to add" is said
// several ways. The agent sees the text only.
export const GENERIC_ASK = 'Could you tell me a bit more about what you need?';
/** What a user says, asked about a request that misses nothing (one is drawn). */
export const NOTHING_TO_ADD_REPLIES = [
  'There is nothing to add: everything is in my question.',
  "That's everything I have, the question is exactly as it was given to me.",
  'No, that is all of it. Could you just answer what I asked?',
  "I think it's all there already. Which part was unclear to you?",
  "Nothing more on my side, sorry, I copied it word for word from my friend's message.",
] as const;
/** What a user says, asked for a detail they do not give this time (one is drawn). */
export const VAGUE_REPLIES = [
  'Hmm, I am not sure how to put it. The usual one, I guess?',
  "I don't remember exactly, it was in an article I skimmed on the train last week.",
  "My colleague Dana brought it up over lunch and I didn't catch all of it, sorry.",
  "It's the one everybody was talking about a while ago, you probably know it better than I do.",
  "Honestly I wrote it on a sticky note that I can't find now, but it shouldn't change much, should it?",
  "Can't you work it out from what I wrote? I'd rather not dig through my notes again.",
] as const;
/** Chat a user sometimes puts around a reply that does give the detail: [before, after] (one is drawn). */
export const REPLY_WRAPPERS = [
  ['Let me check my notes from the meeting.', 'Sorry about that, it was a long day.'],
  ['Good point, I should have said.', 'My sister reminded me just now.'],
  ['Right, I found the message again.', 'Does that help with the rest of it?'],
] as const;
export const TIMEOUT = 'error: the service timed out; try again';
/** The calculator's answer where it has no arithmetic step to evaluate at all (a problem without one). */
export const CALC_ERROR = 'error: could not evaluate the expression';
/** A search with no page at all to return (gsm8k; a spec built alone with no distractor): never a sign that the request misses its detail. */
export const NO_ARTICLE = 'No further article found.';

/** The first v2 texts, kept as names for the tests and the docs. */
export const NOTHING_TO_ADD = NOTHING_TO_ADD_REPLIES[0];
export const VAGUE_REPLY = VAGUE_REPLIES[0];

/** One thing the agent saw after an action: the user's reply or the tool's output, as text. */
export interface VisibleEvent {
  action: 'ask' | 'wiki' | 'calc';
  text: string;
  title?: string;
}
