"""Scenarios as text, generated text as a trajectory, and RC1's reward of that trajectory.

Text format (one dialogue): <|user|>turns<|assistant|>steps<|end|>, steps written as
  <think>thought   <calc>expression=result   <wiki>title   <ask>question   <answer>final answer
A <ask> ends the assistant's turn; the user's reply follows (<|user|>reply<|assistant|>) and the
assistant goes on. Tools are NOT executed in this trainer's episodes: a calc line carries the
result the model wrote, a wiki line only the title it would look up (articles never enter the
text). Tool calls are counted for the rubric's tool_use and reasoning dimensions as written.

Success is the task's metric (a port of lib/rollouts/success.ts: gsm8k numeric match, hotpotqa
exact match after the official normalisation with token F1 as partial credit, strategyqa yes/no).
The seven rubric scores are the dev judge's rules (a port of lib/scoring/heuristic-provider.ts
heuristicBase, without jitter), and the reward is RC1's (lib/evaluation/reward.ts):
  r = (sum_d w_d * score_d - alpha * min(c, cap) * [no clarification needed]) * (1 + beta * (I[hard] - I[easy]))
with w the calibrated weights (configs/weights.json), c the questions asked.
"""
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


# ---- text format ----
def render_prompt(sc):
    return "<|user|>" + "\n".join(m["content"] for m in sc["messages"]) + "<|assistant|>"


def render_step(s):
    if s["type"] == "thought":
        return "<think>" + s["text"]
    if s["type"] == "tool_call":
        return ("<calc>" + s["input"] + "=" + s["output"]) if s["tool"] == "calc" else ("<wiki>" + s["input"])
    return "<ask>" + s["ask"] + "<|end|><|user|>" + s["reply"] + "<|assistant|>"


def render_reference(sc):
    """The reference trajectory as the assistant's text (the SFT target), after the prompt."""
    return "".join(render_step(s) for s in sc["reference"]["steps"]) + "<answer>" + sc["reference"]["final_answer"] + "<|end|>"


def user_reply(sc, asked_before):
    """The environment's reply to a clarifying question: the hidden detail the first time it is needed."""
    if sc["needs_clarification"] and not asked_before and sc.get("clarification"):
        return sc["clarification"]
    return "Nothing to add."


def parse_turn(text):
    """Steps and final answer of one generated assistant turn: ([(kind, text)], answer or None)."""
    parts = STEP.split(text.split("<|end|>")[0])
    steps, answer = [], None
    for tag, body in zip(parts[1::2], parts[2::2]):
        body = body.strip()
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
