// The reward rubric: the written definition of each of the seven dimensions (types.ts DIMENSIONS)
// with anchored guidance for the scores 0, 0.5 and 1. The judge prompt (judge-prompt.ts) renders
// it for live judges, and the heuristic provider implements the same anchors with rules. The text
// is versioned: RUBRIC_VERSION is part of every score-cache key, so changing any definition or
// anchor without bumping it would mix scores given under two rubrics. Bump it with every edit.
import { DIMENSIONS, type Dimension } from './types.ts';

export const RUBRIC_VERSION = 'rc1-rubric-v1';

export interface DimensionRubric {
  title: string;
  /** What the dimension measures, in one or two sentences. */
  definition: string;
  /** What a score of 0, 0.5 and 1 means; scores in between interpolate. */
  anchors: { 0: string; 0.5: string; 1: string };
}

export const RUBRIC: Readonly<Record<Dimension, DimensionRubric>> = Object.freeze({
  correctness: {
    title: 'Correctness',
    definition:
      'Whether the final answer is right, judged against the reference answer: the number for math word problems, yes/no for yes/no questions, the entity or phrase for multi-hop questions.',
    anchors: {
      0: 'The final answer is wrong, missing, or contradicts the reference.',
      0.5: 'Partly right: overlaps the reference answer (e.g. part of a multi-word entity, or the right entity with wrong extra content) but is not equivalent to it.',
      1: 'Equivalent to the reference answer (after normalising case, punctuation, articles and number formatting).',
    },
  },
  reasoning: {
    title: 'Reasoning',
    definition:
      'Whether the steps (thoughts and tool calls) form a valid, complete path from the question to the answer, covering the work the reference needed.',
    anchors: {
      0: 'No reasoning, or reasoning that is invalid or unrelated to the answer given.',
      0.5: 'Some valid steps, but a needed step is missing or a step does not follow, or the steps are right and the conclusion drawn from them is not.',
      1: 'Every needed step is present and valid, and the answer follows from them.',
    },
  },
  clarity: {
    title: 'Clarity',
    definition:
      'Whether the response is easy to follow: steps stated plainly, no repetition, and the final answer stated directly and unambiguously.',
    anchors: {
      0: 'Hard to follow: repetitive or confusing, or the final answer cannot be identified.',
      0.5: 'Followable with effort: some repetition or rambling, or the answer is buried in surrounding text.',
      1: 'Each step is stated once and plainly, and the final answer is stated directly.',
    },
  },
  conciseness: {
    title: 'Conciseness',
    definition:
      'Whether the response is no longer than the task needs, compared with an expert solution of the same task.',
    anchors: {
      0: 'Several times longer than needed: restatements, recaps and filler dominate.',
      0.5: 'Noticeably longer than needed (about twice an expert solution), but most text does work.',
      1: 'About as long as an expert solution, or shorter without losing needed content.',
    },
  },
  clarification: {
    title: 'Clarification appropriateness',
    definition:
      'Whether the assistant asked a clarifying question exactly when the request was missing information it needed, and not otherwise.',
    anchors: {
      0: 'Asked when nothing was missing more than once, or answered without asking although needed information was missing.',
      0.5: 'Asked one question that was not needed but was harmless, or asked when needed but also asked needless further questions.',
      1: 'Asked exactly when needed (once, to the point), or did not ask when the request was complete.',
    },
  },
  tool_use: {
    title: 'Tool use',
    definition:
      'Whether the assistant used the available tools (wiki lookup, calculator) where the task needed them, on the right inputs, without needless calls.',
    anchors: {
      0: 'None of the needed tool calls were made, or the calls made were irrelevant.',
      0.5: 'About half of the needed calls were made, or the needed calls were made along with several needless ones.',
      1: 'Every needed call was made, on the right inputs, and no needless ones.',
    },
  },
  format_safety: {
    title: 'Format and safety',
    definition:
      'Whether the final answer has the form the task asks for (a number, yes/no, or a short phrase) and the response contains nothing unsafe, deceptive or inappropriate.',
    anchors: {
      0: 'No final answer, an answer of the wrong form, or unsafe or inappropriate content.',
      0.5: 'The answer is there and readable, but wrapped in extra prose or not in the expected form.',
      1: 'A final answer of exactly the expected form, and nothing unsafe.',
    },
  },
});

/** The rubric as text, for the judge prompt: one block per dimension, in DIMENSIONS order. */
export function rubricText(): string {
  return DIMENSIONS.map((d) => {
    const r = RUBRIC[d];
    return [
      `${d} (${r.title}): ${r.definition}`,
      `  0   = ${r.anchors[0]}`,
      `  0.5 = ${r.anchors[0.5]}`,
      `  1   = ${r.anchors[1]}`,
    ].join('\n');
  }).join('\n\n');
}
