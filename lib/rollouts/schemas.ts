// zod schemas of the JSONL files the rollout and scoring rules read — scenario files (the shadow
// set, the balanced pool), policy-run files (the `file` rollout source) and rollout files — and
// readValidated, which reads one such file and turns the first schema violation into a DataError
// naming file, line, field and what was expected:
//   runs/qwen.jsonl:3: trajectory.steps[1].tool: expected one of "wiki" | "calc", got "search"
// Scenario files may carry extra fields (the pool adds its own); they are ignored. Run and
// rollout records are strict: an unknown key is an error, so a typo never passes silently.
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import {
  DataError,
  IssueLog,
  TASKS,
  describeValue,
  displayPath,
  issueExpected,
  issueField,
  issuePath,
  parseJsonl,
  valueAt,
  type Location,
} from '../data/index.ts';
import { DIFFICULTIES, ERROR_MODES, ROLLOUT_SOURCES } from './rollout.ts';

const tool = z.enum(['wiki', 'calc']);
export const stepSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('clarify'), ask: z.string(), reply: z.string() }).strict(),
  z.object({ type: z.literal('tool_call'), tool, input: z.string(), output: z.string() }).strict(),
  z.object({ type: z.literal('thought'), text: z.string() }).strict(),
]);
export const trajectorySchema = z.object({ steps: z.array(stepSchema), final_answer: z.string() }).strict();
const message = z.object({ role: z.literal('user'), content: z.string() }).strict();

export const scenarioSchema = z.object({
  id: z.string().min(1),
  task: z.enum(TASKS),
  source_id: z.string(),
  role: z.string(),
  style: z.string(),
  template_id: z.string(),
  messages: z.array(message).min(1),
  context: z.array(z.object({ id: z.string(), title: z.string(), text: z.string(), supporting: z.boolean() }).strict()),
  tools: z.array(tool),
  gold_answer: z.string(),
  needs_clarification: z.boolean(),
  clarification: z.string().nullable(),
  reference: z.object({ steps: z.array(stepSchema), final_answer: z.string() }).strict(),
  /** Added by the balanced pool. */
  difficulty: z.enum(DIFFICULTIES).optional(),
});

/** One candidate of a real model run (the `file` source): which scenario, which policy, the trajectory. */
export const policyRunSchema = z
  .object({
    scenario_id: z.string().min(1),
    policy: z.string().min(1),
    /** Optional: when absent, candidates of a scenario are numbered in file order from 0. */
    candidate_index: z.number().int().nonnegative().optional(),
    trajectory: trajectorySchema,
  })
  .strict();
export type PolicyRun = z.infer<typeof policyRunSchema>;

const count = z.number().int().nonnegative();
export const rolloutSchema = z
  .object({
    rollout_id: z.string().min(1),
    scenario_id: z.string().min(1),
    /** The scenario's source question (several scenarios render one): the evaluation's independent unit. */
    source_id: z.string(),
    task: z.enum(TASKS),
    difficulty: z.enum(DIFFICULTIES).nullable(),
    source: z.enum(ROLLOUT_SOURCES),
    policy: z.string(),
    candidate_index: count,
    messages: z.array(message),
    tools: z.array(tool),
    gold_answer: z.string(),
    needs_clarification: z.boolean(),
    clarification: z.string().nullable(),
    reference_stats: z.object({ tool_calls: count, work_steps: count, words: count }).strict(),
    trajectory: trajectorySchema,
    turns: count,
    clarifications: count,
    tool_calls: count,
    words: count,
    success: z.boolean(),
    f1: z.number().min(0).max(1).nullable(),
    error_modes: z.array(z.enum(ERROR_MODES)),
  })
  .strict();

/** Validates a parsed record; the first violation becomes a DataError at `at`. */
export function validateRecord<S extends z.ZodType>(schema: S, value: unknown, at: Location): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const path = issuePath(issue);
  const expected = issueExpected(issue, { union: 'a step of type "clarify", "tool_call" or "thought"' });
  throw new DataError(at, issueField(path), expected, describeValue(valueAt(value, path)));
}

export interface Located<T> {
  at: Location;
  value: T;
}

/** Reads a JSONL file and validates every record; the first bad line throws a DataError. */
export async function readValidated<S extends z.ZodType>(
  file: string,
  schema: S,
  root?: string,
): Promise<Located<z.infer<S>>[]> {
  const shown = displayPath(file, root);
  const records = parseJsonl(await readFile(file), shown, new IssueLog('fail'));
  return records.map((r) => ({ at: r.at, value: validateRecord(schema, r.value, r.at) }));
}
