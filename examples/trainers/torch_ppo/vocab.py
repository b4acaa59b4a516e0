"""The trainer's tokenizer: a word-piece vocabulary built from the training pool, with byte fallback.

Why not the Qwen3 tokenizer (151 669 tokens)? For a small from-scratch model its embedding and
output matrices dominate: at hidden 512 they are 2 x 77.7 M parameters beside a 25 M transformer,
and every training and decoding step computes 151 669 logits per token. The pool is English with
numbers and a narrow vocabulary, so a few thousand pieces cover it, and this tokenizer needs no
package beyond the standard library (CI's Debian torch has no `tokenizers`). A pretrained model
brings its own tokenizer instead (README: plugging in a pretrained model).

Pieces: the text is split by PIECE (an optional leading space + a run of letters, a single digit,
a run of other non-space characters, or whitespace). The `size` most frequent pieces of the pool
(ties broken by the piece itself, so the vocabulary is a pure function of the pool) get ids; any
other piece is written as its UTF-8 bytes (256 byte tokens), so every text round-trips exactly.
Digits are single tokens so numbers are spelled digit by digit.
"""
import json
import re
from collections import Counter

PIECE = re.compile(r" ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+")
SPECIALS = ["<pad>", "<eos>", "<|user|>", "<|assistant|>", "<|end|>", "<think>", "<calc>", "<wiki>", "<ask>", "<answer>", "<|call|>", "<|obs_end|>"]
KIND = "rc1-pool-pieces-v2"  # v2: the tool-call markers <|call|>, <|obs_end|> (tools are executed in episodes)
SPECIAL_RE = re.compile("(" + "|".join(re.escape(s) for s in SPECIALS) + ")")


class Vocab:
    def __init__(self, pieces):
        self.itos = list(SPECIALS) + [f"<0x{b:02X}>" for b in range(256)] + list(pieces)
        self.byte0 = len(SPECIALS)
        self.stoi = {p: i for i, p in enumerate(self.itos)}
        for s in SPECIALS:
            setattr(self, s.strip("<>|").replace("|", ""), self.stoi[s])
        self.pad, self.eos = self.stoi["<pad>"], self.stoi["<eos>"]

    def __len__(self):
        return len(self.itos)

    @classmethod
    def build(cls, texts, size):
        counts = Counter()
        for t in texts:
            for part in SPECIAL_RE.split(t):
                if part and part not in SPECIALS:
                    counts.update(PIECE.findall(part))
        ranked = sorted(((c, p) for p, c in counts.items() if c >= 2), key=lambda x: (-x[0], x[1]))
        return cls([p for _, p in ranked[:size]])

    def encode(self, text):
        ids = []
        for part in SPECIAL_RE.split(text):
            if not part:
                continue
            if part in SPECIALS:
                ids.append(self.stoi[part])
                continue
            for piece in PIECE.findall(part):
                i = self.stoi.get(piece)
                if i is not None and i >= self.byte0 + 256:
                    ids.append(i)
                else:
                    ids.extend(self.byte0 + b for b in piece.encode("utf-8"))
        return ids

    def decode(self, ids):
        out, buf = [], bytearray()
        for i in ids:
            if self.byte0 <= i < self.byte0 + 256:
                buf.append(i - self.byte0)
                continue
            if buf:
                out.append(buf.decode("utf-8", errors="replace"))
                buf = bytearray()
            if i != self.pad:
                out.append(self.itos[i])
        if buf:
            out.append(buf.decode("utf-8", errors="replace"))
        return "".join(out)

    def to_json(self):
        return json.dumps({"kind": KIND, "specials": SPECIALS, "pieces": self.itos[self.byte0 + 256:]}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text):
        d = json.loads(text)
        if d.get("kind") != KIND or d.get("specials") != SPECIALS:
            raise ValueError(f"vocab.json: not a vocabulary of this trainer's version (kind {KIND}, got {d.get('kind')})")
        return cls(d["pieces"])
