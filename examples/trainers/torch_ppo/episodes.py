"""Scenarios as text, generated text as a trajectory, and RC1's reward of that trajectory.

Text format (one dialogue): <|user|>turns<|assistant|>steps<|end|>, steps written as
  <think>thought   <calc>expression<|call|>RESULT<|obs_end|>   <wiki>title<|call|>RESULT<|obs_end|>
  <ask>question   <answer>final answer
Tools are executed as RC1's rollouts execute them (lib/rollouts/openai-source.ts toolOutput): the
model writes the call up to <|call|>, generation stops there, and the environment appends the
tool's output (RESULT, never written by the model, masked out of the policy's actions and of the
SFT loss) and <|obs_end|>; the model then goes on. calc: the arithmetic evaluator of
lib/rollouts/calc.ts (ported below: `calc_eval`); wiki: the scenario's context document with that
title (exact, case-insensitive, then most shared title words: `lookup_doc`), as "title: text"; a
tool the scenario does not offer answers with the same error text. The SFT targets render the
reference's tool calls the same way, with the output computed by these functions.
A <ask> ends the assistant's turn; the user's reply follows (<|user|>reply<|assistant|>) and the
assistant goes on: the scenario's clarification, else openai-source.ts's "no further details" text.

Success is the task's metric (a port of lib/rollouts/success.ts: gsm8k numeric match, hotpotqa
exact match after the official normalisation with token F1 as partial credit, strategyqa yes/no).
The seven rubric scores are the dev judge's rules (a port of lib/scoring/heuristic-provider.ts
heuristicBase, without jitter), and the reward is RC1's (lib/evaluation/reward.ts):
  r = (sum_d w_d * score_d - alpha * min(c, cap) * [no clarification needed]) * (1 + beta * (I[hard] - I[easy]))
with w the calibrated weights (configs/weights.json), c the questions asked.
"""
import json
import math
import re
import string

DIMENSIONS = ["correctness", "reasoning", "clarity", "conciseness", "clarification", "tool_use", "format_safety"]
STEP = re.compile(r"(<think>|<calc>|<wiki>|<ask>|<answer>)")
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")
ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
PUNCT = set(string.punctuation)


# ---- success (lib/rollouts/success.ts) ----
def normalize_answer(s):
    s = "".join(ch for ch in s.lower() if ch not in PUNCT)
    return " ".join(ARTICLES.sub(" ", s).split())


def hotpot_f1(pred, gold):
    p, g = normalize_answer(pred), normalize_answer(gold)
    special = ("yes", "no", "noanswer")
    if (p in special or g in special) and p != g:
        return 0.0
    pt, gt = p.split(), g.split()
    counts = {}
    for t in gt:
        counts[t] = counts.get(t, 0) + 1
    same = 0
    for t in pt:
        if counts.get(t, 0) > 0:
            same += 1
            counts[t] -= 1
    if same == 0:
        return 0.0
    prec, rec = same / len(pt), same / len(gt)
    return 2 * prec * rec / (prec + rec)


def extract_number(text):
    h = text.rfind("####")
    found = NUMBER.findall(text[h + 4:] if h >= 0 else text)
    if not found:
        return None
    try:
        return float((found[0] if h >= 0 else found[-1]).replace(",", ""))
    except ValueError:
        return None


def parse_yes_no(text):
    first = (normalize_answer(text).split() or [""])[0]
    return {"yes": "yes", "true": "yes", "no": "no", "false": "no"}.get(first)


def judge_success(task, pred, gold):
    """(success, f1): the task's metric; f1 only for hotpotqa."""
    if task == "gsm8k":
        p, g = extract_number(pred), extract_number(gold)
        return (p is not None and g is not None and p == g), None
    if task == "hotpotqa":
        return normalize_answer(pred) == normalize_answer(gold), hotpot_f1(pred, gold)
    p = parse_yes_no(pred)
    return (p is not None and p == parse_yes_no(gold)), None


# ---- tools (lib/rollouts/calc.ts, lib/rollouts/openai-source.ts) ----
NO_DETAILS = "No further details; please answer the question as asked."
_CALC_NUM = re.compile(r"(?:\d+(?:\.\d*)?|\.\d+)")


def _js_div(a, b):
    if b == 0:
        return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _js_pow(a, b):
    if b == 0:
        return 1.0
    if a < 0 and not float(b).is_integer():
        return math.nan
    try:
        return float(a) ** b
    except OverflowError:
        return math.inf if a > 0 or float(b) % 2 == 0 else -math.inf
    except ZeroDivisionError:
        return math.inf


def calc_eval(expression):
    """calc.ts evaluate(): (True, text) or (False, error)."""
    src = re.sub(r"(\d),(?=\d{3}\b)", r"\1", expression).replace("×", "*").replace("x", "*").replace("÷", "/")
    i = 0

    class Fail(Exception):
        pass

    def peek():
        nonlocal i
        while i < len(src) and src[i] in " \t":
            i += 1
        return src[i] if i < len(src) else ""

    def primary():
        nonlocal i
        c = peek()
        if c == "(":
            i += 1
            v = total()
            if peek() != ")":
                raise Fail(f"expected ')' at position {i + 1}")
            i += 1
            return v
        if c == "-":
            i += 1
            return -primary()
        if c == "+":
            i += 1
            return primary()
        m = _CALC_NUM.match(src, i)
        if not m:
            raise Fail("unexpected end of expression" if c == "" else f"unexpected '{c}' at position {i + 1}")
        i = m.end()
        return float(m.group(0))

    def power():
        nonlocal i
        base = primary()
        if peek() == "^" or src.startswith("**", i):
            i += 1 if src[i] == "^" else 2
            return _js_pow(base, power())
        return base

    def product():
        nonlocal i
        v = power()
        while True:
            c = peek()
            if c == "*" and src[i + 1: i + 2] != "*":
                i += 1
                v *= power()
            elif c == "/":
                i += 1
                v = _js_div(v, power())
            elif c == "%":
                i += 1
                d = power()
                v = math.nan if d == 0 or math.isinf(v) else math.fmod(v, d)
            else:
                return v

    def total():
        nonlocal i
        v = product()
        while True:
            c = peek()
            if c == "+":
                i += 1
                v += product()
            elif c == "-":
                i += 1
                v -= product()
            else:
                return v

    try:
        v = total()
        if peek() != "":
            raise Fail(f"unexpected '{peek()}' at position {i + 1}")
        if math.isnan(v) or math.isinf(v):
            raise Fail("the result is not a finite number (division by zero?)")
        return True, format_result(v)
    except Fail as e:
        return False, str(e)


def format_result(v):
    """calc.ts formatResult: integers without a decimal point, else at most 10 decimals, shortest form."""
    if float(v).is_integer():
        return str(int(v))
    r = repr(float(f"{v:.10f}"))
    return r[:-2] if r.endswith(".0") else r


_WORD = re.compile(r"[\W_]+", re.UNICODE)


def _words(t):
    return {w for w in _WORD.split(t.lower()) if w}


def lookup_doc(context, title):
    """openai-source.ts lookupDoc: exact title, case-insensitive, then the most shared title words (ties: first)."""
    q = title.strip()
    for d in context:
        if d["title"] == q:
            return d
    for d in context:
        if d["title"].lower() == q.lower():
            return d
    qw, best, best_n = _words(q), None, 0
    for d in context:
        n = sum(1 for w in _words(d["title"]) if w in qw)
        if n > best_n:
            best, best_n = d, n
    return best


def tool_output(sc, tool, text):
    """openai-source.ts toolOutput: what the environment answers to a call of `tool` with `text`."""
    tools = sc.get("tools") or []
    if tool not in tools:
        return f"error: tool {json.dumps(tool)} is not available here (available: {', '.join(tools)})"
    if tool == "calc":
        ok, out = calc_eval(text)
        return out if ok else f"error: {out}"
    d = lookup_doc(sc.get("context") or [], text)
    return f"{d['title']}: {d['text']}" if d else f"No document found for {json.dumps(text)}."


# ---- text format ----
def render_prompt(sc):
    return "<|user|>" + "\n".join(m["content"] for m in sc["messages"]) + "<|assistant|>"


def render_observation(sc, tool, text):
    """The environment's text after a tool call's <|call|>: the tool's output, then <|obs_end|>."""
    return tool_output(sc, tool, text) + "<|obs_end|>"


def render_step_parts(sc, s):
    """[(text, is_environment)] of one reference step."""
    if s["type"] == "thought":
        return [("<think>" + s["text"], False)]
    if s["type"] == "tool_call":
        return [("<" + s["tool"] + ">" + s["input"] + "<|call|>", False), (render_observation(sc, s["tool"], s["input"]), True)]
    return [("<ask>" + s["ask"] + "<|end|>", False), (user_turn(s["reply"]), True)]


def render_reference_parts(sc):
    """The reference trajectory (the SFT target, after the prompt) as [(text, is_environment)]:
    environment text (tool outputs, the user's replies) is left out of the SFT loss."""
    parts = [p for s in sc["reference"]["steps"] for p in render_step_parts(sc, s)]
    return parts + [("<answer>" + sc["reference"]["final_answer"] + "<|end|>", False)]


def render_reference(sc):
    return "".join(t for t, _ in render_reference_parts(sc))


def user_turn(text):
    return "<|user|>" + text + "<|assistant|>"


def user_reply(sc):
    """The environment's reply to a clarifying question, as openai-source.ts plays it: the
    scenario's clarification when it has one, else the "no further details" text."""
    return sc.get("clarification") or NO_DETAILS


def parse_turn(text):
    """Steps and final answer of one generated assistant turn: ([(kind, text)], answer or None)."""
    parts = STEP.split(text.split("<|end|>")[0])
    steps, answer = [], None
    for tag, body in zip(parts[1::2], parts[2::2]):
        body = body.split("<|call|>")[0].strip()
        if tag == "<answer>":
            answer = body
            break
        steps.append((tag.strip("<>"), body))
        if tag == "<ask>":
            break
    return steps, answer


# ---- the dev judge's rules (lib/scoring/heuristic-provider.ts heuristicBase) and RC1's reward ----
def words(text):
    return len(text.split())


def reference_stats(sc):
    st = sc["reference"]["steps"]
    tools = sum(1 for s in st if s["type"] == "tool_call")
    w = words(sc["reference"]["final_answer"]) + sum(
        words(s["ask"] if s["type"] == "clarify" else s["input"] if s["type"] == "tool_call" else s["text"]) for s in st)
    return {"tool_calls": tools, "work_steps": tools + sum(1 for s in st if s["type"] == "thought"), "words": w}


def answer_form(task, a, gold):
    a = a.strip()
    if not a:
        return 0.0
    if task == "gsm8k":
        if extract_number(a) is None:
            return 0.0
        return 1.0 if re.fullmatch(r"[$€£]?\s*-?[\d,]*\.?\d+\s*[%a-zA-Z$€£.]{0,12}", a) else 0.5
    if task == "strategyqa":
        n = normalize_answer(a)
        return 1.0 if n in ("yes", "no") else (0.5 if parse_yes_no(a) else 0.0)
    return 1.0 if words(a) <= max(8, 2 * words(gold)) else 0.5


def scores(sc, steps, answer, ref):
    """The seven rubric scores of a trajectory (steps: [(kind, text)]) by the dev judge's rules."""
    clamp = lambda x: min(1.0, max(0.0, x))
    answer = answer or ""
    success, f1 = judge_success(sc["task"], answer, sc["gold_answer"])
    correctness = 1.0 if success else (f1 or 0.0)
    thoughts = [t for k, t in steps if k == "think"]
    tools = sum(1 for k, _ in steps if k in ("calc", "wiki"))
    asks = sum(1 for k, _ in steps if k == "ask")
    coverage = 1.0 if ref["work_steps"] == 0 else min(1.0, (tools + len(thoughts)) / ref["work_steps"])
    question = [m["content"] for m in sc["messages"]]
    rep = 0
    for i, t in enumerate(thoughts):
        if any(len(e) >= 20 and e.lower() in t.lower() for e in question + thoughts[:i]):
            rep += 1
    form = answer_form(sc["task"], answer, sc["gold_answer"])
    clarity = clamp(form - 0.5 * (rep / len(thoughts) if thoughts else 0.0))
    n_words = words(answer) + sum(words(t) for _, t in steps)
    ratio = n_words / max(1, ref["words"])
    concise = 1.0 if ratio <= 1.25 else (1 - 0.5 * (ratio - 1.25) / 0.75 if ratio <= 2 else clamp(0.5 - 0.5 * (ratio - 2)))
    if sc["needs_clarification"]:
        clar = 0.0 if asks == 0 else (1.0 if asks == 1 else 0.5)
    else:
        clar = 1.0 if asks == 0 else (0.5 if asks == 1 else 0.0)
    n = ref["tool_calls"]
    tool_use = clamp(1 - 0.25 * tools) if n == 0 else clamp(min(tools, n) / n - 0.15 * max(0, tools - n))
    s = {"correctness": correctness, "reasoning": coverage * (0.6 + 0.4 * correctness), "clarity": clarity,
         "conciseness": concise, "clarification": clar, "tool_use": tool_use, "format_safety": form}
    return s, success, asks


def rc1_reward(sc, s, asks, weights, rw):
    """RC1's reward; rw = the config's train.reward {use_overclar_penalty, alpha, cap, beta}."""
    base = sum(weights[d] * s[d] for d in DIMENSIONS)
    pen = rw["alpha"] * min(asks, rw["cap"]) if (rw["use_overclar_penalty"] and not sc["needs_clarification"]) else 0.0
    d = sc.get("difficulty")
    factor = 1 + rw["beta"] * ((d == "hard") - (d == "easy")) if d else 1.0
    return (base - pen) * factor


def reference_reward(sc, weights, rw):
    """RC1's reward of the scenario's own reference trajectory."""
    kind = {"clarify": "ask", "thought": "think"}
    steps = [(kind.get(s["type"]) or s["tool"], s.get("ask") or s.get("text") or s.get("input") or "") for s in sc["reference"]["steps"]]
    s, _, asks = scores(sc, steps, sc["reference"]["final_answer"], sc["_ref"])
    return rc1_reward(sc, s, asks, weights, rw)
