// The zod schema of a pipeline declaration (what rc1.build.ts exports). Loaded only when the
// declaration changed since it was last validated: importing zod costs ~60 ms.
import { z } from 'zod';

const site = z.object({ file: z.string(), line: z.number(), col: z.number() }).strict();
const targetRef = z
  .object({ kind: z.literal('target'), name: z.string().min(1), output: z.string().min(1).optional() })
  .strict();
const input = z.union([z.string().min(1), targetRef]);

const slurmTime = /^(\d+-)?\d+(:\d{1,2}){0,2}$|^\d+-\d+$/;
export const executorSchema = z.union([
  z.literal('local'),
  z.literal('slurm'),
  z
    .object({
      kind: z.literal('slurm'),
      partition: z
        .string()
        .regex(/^[\w.-]+(,[\w.-]+)*$/, 'a partition name (or a comma-separated list)')
        .optional(),
      gpus: z
        .union([
          z.number().int().positive(),
          z.string().regex(/^([\w.-]+:)?\d+$/, 'a count or type:count, like 2 or a100:2'),
        ])
        .optional(),
      cpus: z.number().int().positive().optional(),
      mem: z
        .string()
        .regex(/^\d+[KMGT]?$/, "a size with an optional unit, like '16G' or '4000M'")
        .optional(),
      time: z.string().regex(slurmTime, "a Slurm time limit: minutes, 'H:MM:SS' or 'D-HH:MM:SS'").optional(),
      sbatchArgs: z.array(z.string().regex(/^--?[A-Za-z]/, 'an sbatch option such as --account=ml')).optional(),
      staging: z
        .string()
        .regex(/^(shared-fs|remote-cache)$/, "'shared-fs' or 'remote-cache'")
        .optional(),
      scratch: z.string().regex(/^\/./, 'an absolute path on the node, like /scratch or /tmp').optional(),
      pollS: z.number().positive().max(3600).optional(),
      graceS: z.number().nonnegative().max(3600).optional(),
    })
    .strict(),
]);

export const targetSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z_][\w.@-]*$/, 'a name of letters, digits, _ . @ - (not starting with a digit)'),
    rule: z.string().min(1),
    inputs: z
      .record(
        z.string().regex(/^\w+$/, 'an input group name of letters, digits and _'),
        z.union([input, z.array(input)]),
      )
      .optional(),
    outputs: z.union([
      z.array(z.string().min(1)).min(1, 'a target declares at least one output'),
      z
        .record(z.string().regex(/^[A-Za-z_]\w*$/, 'an output name of letters, digits and _'), z.string().min(1))
        .refine((r) => Object.keys(r).length > 0, 'a target declares at least one output'),
    ]),
    params: z.array(z.string().regex(/^[\w-]+(\.[\w-]+)*$/, 'a dotted config key like shadow.n')).optional(),
    args: z.record(z.string(), z.json()).optional(),
    secrets: z.array(z.string().regex(/^[A-Za-z_]\w*$/, 'an environment variable name')).optional(),
    env: z.array(z.string().regex(/^[A-Za-z_]\w*$/, 'an environment variable name')).optional(),
    requires: z
      .array(
        z.union([
          z
            .object({
              env: z.string().regex(/^[A-Za-z_]\w*$/, 'an environment variable name'),
              values: z.array(z.string()).optional(),
              optional: z.boolean().optional(),
              why: z.string().min(1),
            })
            .strict(),
          z.object({ url: z.string().url(), why: z.string().min(1) }).strict(),
          z.object({ executable: z.string().min(1), why: z.string().min(1) }).strict(),
          z.object({ config: z.string().min(1), problem: z.string().min(1), why: z.string().min(1) }).strict(),
        ]),
      )
      .optional(),
    state: z
      .array(
        z.union([
          z.string().regex(/^\.rc1\/[^]+$/, 'a path under .rc1/'),
          z
            .object({ path: z.string().regex(/^\.rc1\/[^]+$/, 'a path under .rc1/'), cache: z.boolean().optional() })
            .strict(),
        ]),
      )
      .optional(),
    executor: executorSchema.optional(),
    report: z.string().optional(),
    description: z.string().optional(),
    metrics: z.array(z.string().min(1)).optional(),
    gate: z.boolean().optional(),
    site: site.optional(),
  })
  .strict();

const profileName = z.string().regex(/^[A-Za-z0-9][\w-]*$/, 'a profile name of letters, digits, _ and -');

export const pipelineSchema = z
  .object({
    profiles: z.array(profileName).min(1).optional(),
    defaultProfile: profileName.optional(),
    manifestDir: z.string().optional(),
    defaultTargets: z.array(z.string()).optional(),
    externalRoots: z.array(z.string().min(1)).optional(),
    cacheMaxSize: z.union([z.string(), z.number()]).optional(),
    freeFormConfig: z
      .array(z.string().regex(/^[\w-]+(\.[\w-]+)*$/, 'a dotted config key like notes or team.contacts'))
      .optional(),
    commands: z
      .record(
        z.string().regex(/^[a-z][a-z0-9-]*$/, 'a command name like scorecache (lower case, digits, -)'),
        z.object({ module: z.string().min(1), summary: z.string().min(1), usage: z.string().optional() }).strict(),
      )
      .optional(),
    executors: z.record(z.string(), executorSchema).optional(),
    remoteCache: z
      .object({
        url: z
          .string()
          .regex(
            /^(https?:\/\/[^\s]+|s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[^\s]*)?)$/,
            'an http://, https:// or s3://bucket/prefix URL',
          ),
        mode: z.enum(['read', 'readwrite']).optional(),
        authHeader: z
          .object({
            name: z
              .string()
              .regex(/^[A-Za-z0-9-]+$/, 'a header name')
              .optional(),
            env: z.string().regex(/^[A-Za-z_]\w*$/, 'an environment variable name'),
          })
          .strict()
          .optional(),
        timeoutMs: z.number().int().positive().optional(),
        maxInFlight: z.number().int().min(1).max(256).optional(),
        signingKeyEnv: z
          .string()
          .regex(/^[A-Za-z_]\w*$/, 'an environment variable name')
          .optional(),
        trustedKeys: z
          .record(z.string().regex(/^[\w.@-]+$/, 'a name of letters, digits, _ . @ -'), z.string().min(1))
          .optional(),
        allowNonDeterministic: z.boolean().optional(),
        s3: z
          .object({
            region: z.string().optional(),
            endpoint: z.string().url().optional(),
            forcePathStyle: z.boolean().optional(),
            requestChecksumCalculation: z.enum(['WHEN_SUPPORTED', 'WHEN_REQUIRED']).optional(),
          })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    name: z.string().min(1).optional(),
    historyKeep: z.number().int().min(2).optional(),
    sync: z
      .object({
        from: z.string().regex(/^[\w.-]+$/, 'a name of letters, digits, _ . -'),
        dir: z.string().min(1).optional(),
        peers: z
          .array(
            z
              .object({
                name: z.string().regex(/^\w+$/, 'a peer name of letters, digits and _ (it becomes need_from_<name>)'),
                provides: z.array(
                  z.object({ name: z.string().min(1), path: z.string().min(1), desc: z.string().min(1) }).strict(),
                ),
              })
              .strict(),
          )
          .min(1, 'at least one peer'),
      })
      .strict()
      .optional(),
    report: z
      .object({ sections: z.string().min(1) })
      .strict()
      .optional(),
    targets: z.array(z.unknown()),
    site: site.optional(),
  })
  .strict();

export function formatZodIssue(issue: z.core.$ZodIssue): { field: string; message: string } {
  const field = issue.path.map(String).join('.') || '(root)';
  return { field, message: issue.message };
}
