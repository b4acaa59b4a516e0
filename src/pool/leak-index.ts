// Leak detection against the shadow set with an inverted index (no all-pairs comparison).
// Each shadow item's user turns give its n-gram set G(s) (n-grams inside a turn; a turn shorter
// than n tokens counts as one gram of its own length). The index maps each gram to the shadow
// items holding it. For a pool item p, every gram of p is looked up once, hits are counted per
// shadow item, and
//   similarity(p, s) = |G(s) ∩ G(p)| / |G(s)|   (containment of the shadow item's grams in p)
// Containment, not Jaccard, because a pool item wraps a question in a template: a shadow
// question copied into a pool item has similarity 1 however long the wrapping is.
export const LEAK_DEFINITION = 'similarity(pool item p, shadow item s) = |G(s) ∩ G(p)| / |G(s)|, G = the set of word n-grams of the user turns (tokenize tokens, n-grams inside a turn; a turn shorter than n is one gram); a pool item leaks when its best similarity exceeds the threshold; found through an inverted index from n-grams to shadow items';

export interface LeakMatch {
  shadowId: string;
  similarity: number;
}

function gramsOf(segments: readonly (readonly string[])[], n: number, shortLengths: ReadonlySet<number>, into: Set<string>): void {
  for (const seg of segments) {
    for (let i = 0; i + n <= seg.length; i++) into.add(seg.slice(i, i + n).join(' '));
    for (const len of shortLengths) {
      for (let i = 0; i + len <= seg.length; i++) into.add(seg.slice(i, i + len).join(' '));
    }
  }
}

export class LeakIndex {
  private readonly index = new Map<string, number[]>();
  private readonly sizes: number[] = [];
  private readonly ids: string[] = [];
  private readonly shortLengths = new Set<number>();

  constructor(shadow: readonly { id: string; segments: readonly (readonly string[])[] }[], private readonly n: number) {
    for (const s of shadow) {
      const grams = new Set<string>();
      for (const seg of s.segments) {
        if (seg.length === 0) continue;
        if (seg.length < n) {
          grams.add(seg.join(' '));
          this.shortLengths.add(seg.length);
        } else {
          for (let i = 0; i + n <= seg.length; i++) grams.add(seg.slice(i, i + n).join(' '));
        }
      }
      const at = this.ids.length;
      this.ids.push(s.id);
      this.sizes.push(grams.size);
      for (const g of grams) {
        const list = this.index.get(g);
        if (list) list.push(at);
        else this.index.set(g, [at]);
      }
    }
  }

  get shadowItems(): number {
    return this.ids.length;
  }

  /** The shadow item most contained in the pool item's turns, or null when none shares a gram. */
  best(segments: readonly (readonly string[])[]): LeakMatch | null {
    const grams = new Set<string>();
    gramsOf(segments, this.n, this.shortLengths, grams);
    const hits = new Map<number, number>();
    for (const g of grams) {
      const list = this.index.get(g);
      if (list) for (const at of list) hits.set(at, (hits.get(at) ?? 0) + 1);
    }
    let best: LeakMatch | null = null;
    for (const [at, h] of hits) {
      const similarity = h / this.sizes[at]!;
      if (!best || similarity > best.similarity || (similarity === best.similarity && this.ids[at]! < best.shadowId)) {
        best = { shadowId: this.ids[at]!, similarity };
      }
    }
    return best;
  }
}
