// The seed pool's JSONL, written without building each Scenario object: a pool renders each
// source item many times, and most of a line (the item's documents, its reference steps) is the
// same every time. PoolLines keeps, per item and context setting (every document or the
// supporting ones), the JSON of those parts as UTF-8 bytes, and writes each line from them and the
// rendering's own fields. The line is byte for byte `JSON.stringify(poolScenario(item, render))`
// followed by '\n' (lib/pool/build-pool.ts; the keys in buildScenario's order, then `hint`):
// test/unit/pool-lines.test.ts compares the two for every scenario of a pool.
import { closeSync, openSync, writeSync } from 'node:fs';
import { buildReference, scenarioContext, scenarioTools, type ContextDoc, type SourceItem } from '../data/index.ts';
import type { PoolRender } from './render-scenario.ts';

const J = JSON.stringify;
const BUFFER_BYTES = 1 << 20;

/** The JSON of a scenario's parts that depend on its item and context setting only. */
interface ItemParts {
  /** `,"context":[…],"tools":[…],"gold_answer":"…","needs_clarification":` */
  middle: Buffer;
  /** The item's reference steps, comma-separated, without brackets ('' when none). */
  steps: Buffer;
  /** `],"final_answer":"…"},"hint":` */
  end: Buffer;
  hasSteps: boolean;
}

function itemParts(item: SourceItem, context: readonly ContextDoc[]): ItemParts {
  const gold = J(item.gold_answer);
  const steps = J(buildReference(item, context, null).steps).slice(1, -1);
  return {
    middle: Buffer.from(
      `,"context":${J(context)},"tools":${J(scenarioTools(item.task))},"gold_answer":${gold},"needs_clarification":`,
    ),
    steps: Buffer.from(steps),
    end: Buffer.from(`],"final_answer":${gold}},"hint":`),
    hasSteps: steps !== '',
  };
}

/** Writes pool scenarios as JSON lines to a file, through a 1 MiB buffer. */
export class PoolLines {
  private readonly fd: number;
  private buf = Buffer.allocUnsafe(BUFFER_BYTES);
  private pos = 0;
  /** Per item object: its parts with every document [0] and with the supporting ones [1]. */
  private readonly parts = new WeakMap<SourceItem, [ItemParts | undefined, ItemParts | undefined]>();

  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }

  /** Appends the line of one rendering of an item. */
  write(item: SourceItem, render: PoolRender): void {
    const gold = render.context === 'supporting';
    let both = this.parts.get(item);
    if (!both) this.parts.set(item, (both = [undefined, undefined]));
    let p = both[gold ? 1 : 0];
    if (!p) {
      const all = scenarioContext(item);
      p = itemParts(item, gold ? all.filter((d) => d.supporting) : all);
      both[gold ? 1 : 0] = p;
    }
    const asks = render.needs_clarification;
    if (asks !== (render.clarification !== null) || asks !== (render.clarifying_question !== null)) {
      throw new Error(
        `internal error: scenario ${render.id}: clarification and clarifying_question must be set exactly when needs_clarification; please report this`,
      );
    }
    let messages = '';
    for (const m of render.messages)
      messages += `${messages ? ',' : ''}{"role":${J(m.role)},"content":${J(m.content)}}`;
    this.text(
      `{"id":${J(render.id)},"task":${J(item.task)},"source_id":${J(item.source_id)},"role":${J(render.role)},"style":${J(render.style)},"template_id":${J(render.template_id)},"messages":[${messages}]`,
    );
    this.bytes(p.middle);
    const clarify = asks
      ? `{"type":"clarify","ask":${J(render.clarifying_question)},"reply":${J(render.clarification)}}${p.hasSteps ? ',' : ''}`
      : '';
    this.text(`${asks},"clarification":${J(render.clarification)},"reference":{"steps":[${clarify}`);
    this.bytes(p.steps);
    this.bytes(p.end);
    this.text(`${J(render.hint)}}\n`);
  }

  /** Writes what is buffered and closes the file. */
  close(): void {
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
    }
  }

  private text(s: string): void {
    // A UTF-16 code unit takes at most 3 bytes of UTF-8.
    if (this.pos + s.length * 3 > this.buf.length) {
      this.flush();
      if (s.length * 3 > this.buf.length) this.buf = Buffer.allocUnsafe(s.length * 3);
    }
    this.pos += this.buf.write(s, this.pos);
  }

  private bytes(b: Buffer): void {
    if (this.pos + b.length > this.buf.length) {
      this.flush();
      if (b.length > this.buf.length) {
        this.writeAll(b, b.length);
        return;
      }
    }
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }

  private flush(): void {
    this.writeAll(this.buf, this.pos);
    this.pos = 0;
  }

  private writeAll(b: Buffer, length: number): void {
    for (let off = 0; off < length; ) off += writeSync(this.fd, b, off, length - off);
  }
}
